"""Run a command against a throwaway PostgreSQL server: `python -m tests.pgserver CMD ...`.

Starts a fresh cluster (Debian's postgresql binaries) in a temporary folder,
listening on 127.0.0.1 only, sets DATABASE_URL for the command, and removes
everything afterwards. PostgreSQL refuses to run as root, so as root the
server runs as the `postgres` system user. `postgres_server()` is the same
server as a context manager, for scripts such as bench/load_judges.py.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager

from tests.servers import free_port


def _binary(name):
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name)]
    if not found or not found[-1]:
        sys.exit(f"PostgreSQL's {name} is not installed: run `make system-deps` (apt-get install postgresql).")
    return found[-1]


def _as_server_user(command):
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


@contextmanager
def postgres_server(max_connections=100):
    """A fresh PostgreSQL cluster on 127.0.0.1; yields its DATABASE_URL and removes it all on exit."""
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="parasol-pg-")
    data = os.path.join(workdir, "data")
    if os.geteuid() == 0:
        shutil.chown(workdir, "postgres")
    run = lambda args: subprocess.run(_as_server_user(args), check=True, stdout=subprocess.DEVNULL)  # noqa: E731
    try:
        run([_binary("initdb"), "-D", data, "-U", "parasol", "--auth=trust", "-E", "UTF8"])
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {workdir} -c fsync=off -c max_connections={max_connections}"
        )
        run([_binary("pg_ctl"), "-D", data, "-o", options, "-l", os.path.join(workdir, "log"), "-w", "start"])
        yield f"postgres://parasol@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_server_user([_binary("pg_ctl"), "-D", data, "-m", "immediate", "stop"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(workdir, ignore_errors=True)


def main(command):
    with postgres_server() as url:
        return subprocess.run(command, env=dict(os.environ, DATABASE_URL=url)).returncode


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m tests.pgserver COMMAND [ARGS...]")
    sys.exit(main(sys.argv[1:]))
