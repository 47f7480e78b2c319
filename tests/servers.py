"""Real servers for integration tests: Redis and a Celery worker, on 127.0.0.1 only.

Every wait here is on a condition, with bounds generous enough for a machine whose
cores are saturated by another job: they only decide when to give up.
"""

import http.client
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def closed_port():
    """A port on 127.0.0.1 that certainly refuses connections while the block runs: bound here, never listened on
    (so nothing else can take it), whatever else runs on the machine."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield holder.getsockname()[1]


def use_broker(url, results=None):
    """Repoint this process's Celery app; cached connections and result backends are dropped.

    A pooled connection would otherwise outlive the change and keep reaching the old broker.
    """
    from parasol.celery import app

    app.conf.broker_url = url
    if results is not None:
        app.conf.result_backend = results
        app._backend_cache = None
        app._local.__dict__.pop("backend", None)
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None


@contextmanager
def unreachable_broker():
    """This process's Celery app pointed at a closed port (no pooled connection kept), then back; yields the URL."""
    from parasol.celery import app

    old = app.conf.broker_url, app.conf.result_backend
    with closed_port() as port:
        url = f"redis://127.0.0.1:{port}/0"
        use_broker(url, results=url)
        try:
            yield url
        finally:
            use_broker(*old)


def wait_until(condition, timeout=300, interval=0.05):
    """True once `condition()` holds, False if it has not after `timeout` seconds (a bound, not a wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return False


def run_marker(queue, timeout=300):
    """Queue a marker task on `queue` and wait until a worker has run it: every task queued there before
    it has run by then, since a queue hands tasks out first in, first out and a worker here (`start_worker`,
    solo pool, one task prefetched) runs one at a time. Shows that nothing is left to land, without a sleep."""
    from parasol.celery import app

    return app.send_task("celery.accumulate", args=["marker"], queue=queue, ignore_result=False).get(timeout=timeout)


def wait_for_port(port, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")


def wait_for_answer(port, path, process=None, timeout=300.0):
    """Until a GET of `path` on 127.0.0.1:`port` gets any HTTP answer (a server up, its app loaded); RuntimeError
    at once if the server's `process` exits first (its own output says why)."""

    def answers():
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited ({process.returncode}) before answering")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            connection.request("GET", path)
            connection.getresponse().read()
            return True
        except (OSError, http.client.HTTPException):
            return False
        finally:
            connection.close()

    if not wait_until(answers, timeout=timeout, interval=0.2):
        raise RuntimeError(f"no answer from 127.0.0.1:{port}{path} after {timeout}s")


def stop(process, timeout=30):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def redis_server():
    """A throwaway redis-server; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed: run `make system-deps`")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


def start_worker(redis_url, database_env, queues=None, extra_env=None, name=None, pool="solo", concurrency=None):
    """A real Celery worker process sharing the test database; `name` gives it its own node name.

    `queues`: comma separated, default every queue; `pool="prefork"`: one child process runs the
    tasks (killing it is a worker lost mid-task); `pool="threads"` with `concurrency` threads (the served worker).
    """
    from parasol.queues import ALL

    queues = queues or ",".join(ALL)
    env = dict(os.environ, REDIS_URL=redis_url, CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url)
    env.update(database_env)
    env.update(extra_env or {})
    command = [sys.executable, "-m", "celery", "-A", "parasol", "worker", "-Q", queues, "-P", pool, "-l", "warning"]
    if pool == "prefork" or concurrency is not None:
        command += ["--concurrency", str(concurrency or 1)]
    if name is not None:
        command += ["-n", f"{name}@%h"]
    return subprocess.Popen(command, cwd=REPO, env=env)


@contextmanager
def broker_with_worker(connection, queues=None, extra_env=None):
    """A throwaway Redis as this process's broker and result backend, and one worker on it; yields (url, worker)."""
    from parasol.celery import app

    old = app.conf.broker_url, app.conf.result_backend
    with redis_server() as url:
        use_broker(url, results=url)
        worker = start_worker(url, database_env(connection), queues=queues, extra_env=extra_env)
        try:
            yield url, worker
        finally:
            stop(worker)
            use_broker(*old)


@contextmanager
def workers_for_a_script(settings_env, workers):
    """For a benchmark run as a script: a throwaway Redis, `settings_env` in this process's environment, the
    database migrated, Django set up and real workers started (`workers`: keyword arguments of `start_worker`
    each, but the broker and the database); yields them once every one answers a ping, stops them after."""
    with redis_server() as url:
        os.environ.update(settings_env, REDIS_URL=url, CELERY_BROKER_URL=url, CELERY_RESULT_BACKEND=url)
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, check=True)
        import django

        django.setup()
        from django.db import connection

        from parasol.celery import app

        database = database_env(connection)
        started = [start_worker(url, database, extra_env=settings_env, **worker) for worker in workers]
        try:
            answering = lambda: len([n for r in app.control.ping(timeout=1.0) for n in r]) == len(started)  # noqa: E731
            if not wait_until(answering, timeout=600, interval=0.5):
                raise RuntimeError(f"not every one of {len(started)} workers answers a ping after 600 s")
            yield started
        finally:
            for worker in started:
                stop(worker)


def database_env(connection):
    """Environment that points a child process at the database this test uses."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return {"SQLITE_PATH": settings["NAME"]}
    user, host, port, name = settings["USER"], settings["HOST"], settings["PORT"], settings["NAME"]
    return {"DATABASE_URL": f"postgres://{user}@{host}:{port}/{name}"}


@contextmanager
def production_gunicorn(connection, **extra_env):
    """gunicorn with production settings on the test database (SQLite, or PostgreSQL under tests.pgserver); its URL."""
    from bench import load_judges

    env = load_judges.server_env(database_env(connection), "redis://127.0.0.1:1/0")
    env.update(extra_env)
    port = free_port()
    process = load_judges.start_gunicorn(env, port, workers=1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@contextmanager
def llama_cpp_server(model_path, threads=1, port=None):
    """llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) on `port` (default: a free one); yields its
    /v1 URL."""
    port = port or free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--host", "127.0.0.1"]
    command += ["--port", str(port), "--n_threads", str(threads), "--n_ctx", "2048", "--verbose", "false"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, timeout=120)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(process)


class CuttableLink:
    """An HTTP link to a server, on a free 127.0.0.1 port, that a test cuts after a given number of answered
    requests and mends again: a request past the cut has its connection closed unanswered, as a server stopped
    mid-batch leaves it. It counts what it forwarded and what it dropped."""

    def __init__(self, upstream, cut_after=None):
        from http.server import ThreadingHTTPServer

        self.upstream, self.cut_after = urlsplit(upstream), cut_after
        self.forwarded = self.dropped = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def mend(self):
        with self._lock:
            self.cut_after = None

    def close(self):
        self._server.shutdown()
        self._server.server_close()

    def _admit(self):
        with self._lock:
            if self.cut_after is not None and self.forwarded >= self.cut_after:
                self.dropped += 1
                return False
            self.forwarded += 1
            return True

    def _forward(self, method, path, body, content_type):
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=300)
        try:
            connection.request(method, path, body=body, headers={"Content-Type": content_type})
            response = connection.getresponse()
            return response.status, response.getheader("Content-Type", "application/json"), response.read()
        finally:
            connection.close()

    def _handler(self):
        from http.server import BaseHTTPRequestHandler

        link = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not link._admit():
                    self.close_connection = True  # no answer at all
                    return
                status, content_type, answer = link._forward("POST", self.path, body, self.headers["Content-Type"])
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        return Handler
