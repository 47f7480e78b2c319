"""`rundemo` stops cleanly: web server, then workers (warm shutdown), then Redis; no traceback."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from celery import Celery

from demo.management.commands.rundemo import WORKERS
from tests import servers

pytestmark = pytest.mark.integration

# Generous: the suite must pass with both cores saturated by another job.
START_SECONDS = 240
STOP_SECONDS = 180


def wait_until(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} after {seconds} s")


def serves(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def workers_answer(redis_url, count):
    replies = Celery(broker=redis_url, set_as_current=False).control.ping(timeout=1.0)
    return len(replies) >= count


@pytest.fixture
def demo_env(tmp_path):
    redis_url = f"redis://127.0.0.1:{servers.free_port()}/0"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PARASOL_", "CELERY_", "DATABASE_"))}
    env.update(
        SQLITE_PATH=str(tmp_path / "demo.sqlite3"),
        REDIS_URL=redis_url,
        PARASOL_METRICS="lev",
        DJANGO_DEBUG="true",  # the demo runs in debug (it refuses production without a secret key)
        PARASOL_CACHE_DIR=str(tmp_path / "cache"),
        PARASOL_BEAT_SCHEDULE=str(tmp_path / "beat" / "celerybeat-schedule"),
        PYTHONUNBUFFERED="1",
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=servers.REPO, env=env, check=True)
    return env, redis_url


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_rundemo_stops_in_order_without_a_traceback(demo_env, tmp_path, signum):
    env, redis_url = demo_env
    port = servers.free_port()
    log = tmp_path / "rundemo.log"
    with open(log, "w") as output:
        demo = subprocess.Popen(
            [sys.executable, "manage.py", "rundemo", "--port", str(port)],
            cwd=servers.REPO,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until(lambda: serves(port), START_SECONDS, "the demo does not serve")
        count = len(WORKERS)  # cpu, gpu, served, interactive
        wait_until(lambda: workers_answer(redis_url, count), START_SECONDS, f"the {count} workers do not answer")
        demo.send_signal(signum)
        returncode = demo.wait(timeout=STOP_SECONDS)
    finally:
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGKILL)
            demo.wait()
    text = log.read_text()
    assert returncode == 0, text
    assert "Traceback" not in text and "ConnectionError" not in text, text
    assert text.index("Stopping the demo") < text.index("Demo stopped."), text
    assert not serves(port)
    redis_port = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", redis_port)) != 0, "Redis was left running"
