"""Run the whole demo: Redis, the Celery workers and the web server; Ctrl-C stops all of it."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from demo.management.commands.load_demo import DEMO_PASSWORD, DEMO_USERNAME
from scoring.tasks import queue_sweep

HOST = "127.0.0.1"
# How long each part may take to stop before it is killed. Workers get the
# longest: a warm shutdown finishes the task in hand (and acknowledges it),
# which needs Redis, so Redis stops last.
WEB_STOP_SECONDS = 10
WORKER_STOP_SECONDS = 60
REDIS_STOP_SECONDS = 10
# The production shape in miniature (docs/deployment.md): the slow LLM work on `gpu`
# never holds up the quick metrics on `cpu`; LLM metrics a campaign sends to a server
# backend go to `served`, whose worker waits on many requests at once on threads and
# never behind an in-process model; reports, detector training and generation runs have
# a worker of their own, so no scoring batch is ever ahead of them; the periodic sweep
# (-B) runs inside the cpu worker.
WORKERS = {
    "cpu worker": "celery -A parasol worker -Q cpu -n cpu@%h --concurrency 1 -B -l warning",
    "gpu worker": "celery -A parasol worker -Q gpu -n gpu@%h --concurrency 1 -l warning",
    "served worker": "celery -A parasol worker -Q served -n served@%h --pool threads --concurrency 8 -l warning",
    "interactive worker": "celery -A parasol worker -Q reports,training,generation -n interactive@%h"
    " --concurrency 1 -l warning",
}
# The two scoring workers that run models (cpu: the encoders; gpu: the in-process LLM) share the
# machine's cores: each gets half (at least one) for its math libraries' threads. Both with every core
# would oversubscribe them, and an LLM's threads waiting on a busy core stall each forward pass.
MODEL_WORKERS = ("cpu worker", "gpu worker")


def model_threads(cores=None):
    """Threads for each model-running worker: half the cores, at least one (`OMP_NUM_THREADS` may say otherwise)."""
    return str(max(1, (cores or os.cpu_count() or 1) // 2))


def _port_open(port):
    with socket.socket() as probe:
        probe.settimeout(0.3)
        return probe.connect_ex((HOST, port)) == 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


class Command(BaseCommand):
    help = "Start Redis, a Celery worker and the web server on 127.0.0.1:8000 for the demo."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args, port, **options):
        # The broker the worker and the web app will use (REDIS_URL): start Redis there.
        redis_port = urlparse(settings.CELERY_BROKER_URL).port or 6379
        if _port_open(port):
            raise CommandError(f"Port {port} on {HOST} is already in use; stop what runs there or pass --port.")
        # Ctrl-C and a plain `kill` both stop everything, even when started from a
        # script (background jobs inherit SIGINT ignored).
        signal.signal(signal.SIGINT, _interrupt)
        signal.signal(signal.SIGTERM, _interrupt)
        # Started in this order, stopped in the reverse: web, workers, Redis.
        processes = {"redis": [], "workers": [], "web": []}
        # The beat in the cpu worker keeps its schedule file there (CELERY_BEAT_SCHEDULE_FILENAME).
        Path(settings.CELERY_BEAT_SCHEDULE_FILENAME).parent.mkdir(parents=True, exist_ok=True)
        try:
            processes["redis"] += self._start_redis(redis_port)
            for name, command in WORKERS.items():
                threads = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", model_threads())}
                env = threads if name in MODEL_WORKERS else {}
                processes["workers"].append(self._spawn(name, [sys.executable, "-m", *command.split()], env))
            processes["web"].append(
                self._spawn("web", [sys.executable, "manage.py", "runserver", f"{HOST}:{port}", "--noreload"])
            )
            # Pairs loaded before the worker was up were not queued: sweep them now.
            queue_sweep()
            self._announce(port)
            self._wait([p for group in processes.values() for p in group])
        except KeyboardInterrupt:
            self.stdout.write("\nStopping the demo: web server, then workers (finishing their task), then Redis.")
        finally:
            # A second Ctrl-C must not cut the orderly stop short; every wait below is bounded.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self._stop(processes["web"], WEB_STOP_SECONDS)
            self._stop(processes["workers"], WORKER_STOP_SECONDS)
            self._stop(processes["redis"], REDIS_STOP_SECONDS)
            self.stdout.write("Demo stopped.")

    def _start_redis(self, redis_port):
        if _port_open(redis_port):
            self.stdout.write(f"Using the Redis server already listening on {HOST}:{redis_port}.")
            return []
        binary = shutil.which("redis-server")
        if binary is None:
            raise CommandError("redis-server is not installed: run `make system-deps` (apt-get install redis-server).")
        process = self._spawn(
            "redis", [binary, "--bind", HOST, "--port", str(redis_port), "--save", "", "--appendonly", "no"]
        )
        for _ in range(50):
            if _port_open(redis_port):
                return [process]
            time.sleep(0.1)
        raise CommandError(f"Redis did not start on {HOST}:{redis_port}.")

    def _spawn(self, name, command, env=None):
        told = "".join(f"{key}={value} " for key, value in (env or {}).items())
        self.stdout.write(f"Starting {name}: {told}{' '.join(command)}")
        # A new session keeps Ctrl-C with us, so we stop the children in order.
        return subprocess.Popen(
            command, cwd=settings.BASE_DIR, start_new_session=True, env={**os.environ, **(env or {})}
        )

    def _announce(self, port):
        base = f"http://{HOST}:{port}"
        self.stdout.write(
            self.style.SUCCESS(
                f"\nParasol demo is running.\n"
                f"  Judge link:        {base}/j/demo/\n"
                f"  Researcher login:  {base}/accounts/login/  user '{DEMO_USERNAME}', password '{DEMO_PASSWORD}'\n"
                f"  API schema:        {base}/api/schema/\n"
                f"Press Ctrl-C to stop everything.\n"
            )
        )

    def _wait(self, processes):
        while all(process.poll() is None for process in processes):
            time.sleep(0.5)
        failed = [p for p in processes if p.poll() is not None]
        raise CommandError(f"A demo process stopped unexpectedly: {' '.join(failed[0].args)}")

    def _stop(self, processes, seconds):
        """SIGTERM (a Celery worker's warm shutdown) to each leader, wait up to `seconds`, then kill the group."""
        # The leader only: a Celery worker's main process lets its pool finish the
        # task in hand; SIGTERM to the whole group would kill that pool process
        # mid-task (WorkerLostError and its traceback). Leftovers are killed below.
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{' '.join(process.args[:4])} did not stop within {seconds} s: killed.")
                _signal_group(process, signal.SIGKILL)
                process.wait()
            _signal_group(process, signal.SIGKILL)  # leftovers of a group whose leader has exited


def _signal_group(process, signum):
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
