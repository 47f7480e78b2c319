"""Run a command against a throwaway PostgreSQL server: `python -m tests.pgserver CMD ...`.

Starts a fresh cluster (Debian's postgresql binaries) in a temporary folder,
listening on 127.0.0.1 only, sets DATABASE_URL for the command, and removes
everything afterwards. PostgreSQL refuses to run as root, so as root the
server runs as the `postgres` system user.
"""

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile


def _binary(name):
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name)]
    if not found or not found[-1]:
        sys.exit(f"PostgreSQL's {name} is not installed: run `make system-deps` (apt-get install postgresql).")
    return found[-1]


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user(command):
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


def main(command):
    port = _free_port()
    workdir = tempfile.mkdtemp(prefix="parasol-pg-")
    data = os.path.join(workdir, "data")
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres")
    run = lambda args: subprocess.run(_as_server_user(args), check=True, stdout=subprocess.DEVNULL)  # noqa: E731
    try:
        run([_binary("initdb"), "-D", data, "-U", "parasol", "--auth=trust", "-E", "UTF8"])
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {workdir} -c fsync=off -c max_connections=100"
        run([_binary("pg_ctl"), "-D", data, "-o", options, "-l", os.path.join(workdir, "log"), "-w", "start"])
        env = dict(os.environ, DATABASE_URL=f"postgres://parasol@127.0.0.1:{port}/postgres")
        return subprocess.run(command, env=env).returncode
    finally:
        subprocess.run(
            _as_server_user([_binary("pg_ctl"), "-D", data, "-m", "immediate", "stop"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m tests.pgserver COMMAND [ARGS...]")
    sys.exit(main(sys.argv[1:]))
