"""The Celery queues: where each task goes (routed here once, `CELERY_TASK_ROUTES`), and what is known of them.

Interactive work has queues of its own, so no scoring batch is ever ahead of it:
`reports` (large reports), `training` (span detector retraining), `generation` (LLM
generation runs). Scoring batches go to their metric's queue, `cpu` or `gpu` (the
registry says which), handed out per campaign in turn (scoring/dispatch.py).

A task whose worker process died (SIGKILL, out of memory) is put back by Celery
(acks late, reject on worker lost) and runs once more; a third start is refused and
recorded as failed, with its reason, where the pages and the staff page read it.
"""

import json
import logging
import time
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import urlparse

import redis
from celery import Task
from django.core.cache import cache

from scoring.metrics.registry import CPU, GPU, queue_of

logger = logging.getLogger(__name__)

REPORTS = "reports"
TRAINING = "training"
GENERATION = "generation"
SCORING = (CPU, GPU)
ALL = (REPORTS, TRAINING, GENERATION, *SCORING)

ROUTES = {
    "reports.tasks.compute_report_task": REPORTS,
    "reports.tasks.train_detector_task": TRAINING,
    "generation.tasks.generate_batch": GENERATION,
    "generation.tasks.select_candidates": GENERATION,
    "scoring.tasks.sweep_all": CPU,
}
# Tasks whose first argument is a metric: they run where the metric's model is.
BY_METRIC = {"scoring.tasks.score_batch", "scoring.tasks.sweep_metric"}

QUEUED = "queued for a worker"  # the stage of a report or a training no worker has taken yet
LOST_REASON = "its worker process died twice while running it (killed, or out of memory)"
EVENTS_KEPT = 200
EVENTS_KEY = "parasol:task-events"
WORKERS_CACHE_SECONDS = 15


def route(name, args, kwargs, options, task=None, **extra):
    """Celery router (CELERY_TASK_ROUTES): the queue of every Parasol task, decided here only."""
    if name in ROUTES:
        return {"queue": ROUTES[name]}
    if name in BY_METRIC:
        metric = args[0] if args else kwargs["metric"]
        return {"queue": queue_of(metric)}
    return None


@lru_cache(maxsize=8)
def _client(url):
    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)


def _app():
    """Parasol's Celery app, named, not `current_app`: any `Celery(...)` made later (a script's, a test's)
    would otherwise become the current one and take these calls to its broker."""
    from parasol.celery import app

    return app


def client():
    """A Redis client on the broker this process uses now (one per URL: a changed URL never reuses the old pool)."""
    return _client(_app().conf.broker_url)


def record_event(kind, task, reason="", **facts):
    """Keep `kind` (retried, failed) of a task where the pages read it; a Redis outage only loses the note."""
    event = {"time": time.time(), "kind": kind, "task": task, "reason": reason, **facts}
    try:
        with client().pipeline() as pipe:
            pipe.lpush(EVENTS_KEY, json.dumps(event)).ltrim(EVENTS_KEY, 0, EVENTS_KEPT - 1).execute()
    except redis.RedisError as error:
        logger.warning("Could not record that %s was %s (%s): %s", task, kind, reason, error)


def recent_events(**match):
    """The recorded events, newest first, those whose facts equal `match` (e.g. campaign=3)."""
    try:
        rows = [json.loads(raw) for raw in client().lrange(EVENTS_KEY, 0, EVENTS_KEPT - 1)]
    except redis.RedisError:
        return []
    found = [row for row in rows if all(row.get(key) == value for key, value in match.items())]
    for row in found:
        row["when"] = datetime.fromtimestamp(row["time"], tz=UTC)
        row["facts"] = {key: value for key, value in row.items() if key not in _EVENT_FIELDS}
    return found


_EVENT_FIELDS = {"time", "kind", "task", "reason", "when", "facts"}


class WatchedTask(Task):
    """A task retried once after its worker died, then failed with its reason (never "queued" forever).

    Subclasses say what failing means for their object (`given_up`) and which facts identify
    it on a page (`facts`).
    """

    def __call__(self, *args, **kwargs):
        request = self.request
        if not request.called_directly and not request.is_eager:
            attempt = _start_attempt(request.id, request.retries)
            if attempt == 2:
                record_event("retried", self.name, "its worker process died while running it", **self.facts(args))
            elif attempt and attempt > 2:
                self._give_up(args, LOST_REASON)
                return None
        return super().__call__(*args, **kwargs)

    def on_failure(self, exc, task_id, args, kwargs, einfo):
        self._give_up(args, f"{type(exc).__name__}: {exc}")

    def _give_up(self, args, reason):
        record_event("failed", self.name, reason, **self.facts(args))
        try:
            self.given_up(args, reason)
        except Exception:  # the note above is what matters; the object may be gone
            logger.exception("Could not mark %s as failed", self.name)

    def facts(self, args) -> dict:
        return {}

    def given_up(self, args, reason):
        """What this task's failure means for its object (a run failed, a report's status)."""


def _start_attempt(task_id, retries):
    """How many times this delivery of the task has started (1 the first time); None without Redis."""
    key = f"parasol:attempt:{task_id}:{retries}"
    try:
        with client().pipeline() as pipe:
            count, _ = pipe.incr(key).expire(key, 7 * 24 * 3600).execute()
        return count
    except redis.RedisError:
        return None


def queue_lengths():
    """{queue: tasks waiting in it} (kombu keeps a queue as a Redis list, one per priority level)."""
    names = {queue: [queue, *(f"{queue}\x06\x16{level}" for level in range(1, 10))] for queue in ALL}
    with client().pipeline() as pipe:
        for keys in names.values():
            for key in keys:
                pipe.llen(key)
        counts = iter(pipe.execute())
    return {queue: sum(next(counts) for _ in keys) for queue, keys in names.items()}


def workers():
    """[{name, queues, active}] of the workers answering now; cached a few seconds (asking takes a second)."""
    found = cache.get("parasol:workers")
    if found is None:
        inspect = _app().control.inspect(timeout=1.0)
        queues, active = inspect.active_queues() or {}, inspect.active() or {}
        found = [
            {
                "name": name,
                "queues": sorted(queue["name"] for queue in queues[name]),
                "active": [{"task": task["name"], "args": str(task.get("args"))[:80]} for task in active.get(name, [])],
            }
            for name in sorted(queues)
        ]
        cache.set("parasol:workers", found, WORKERS_CACHE_SECONDS)
    return found


def waiting_on(queue):
    """What a task queued on `queue` waits for, in words (a report's or a training's page)."""
    try:
        ahead = queue_lengths()[queue]
        serving = sum(queue in worker["queues"] for worker in workers())
    except Exception as error:  # Redis or the workers do not answer: say so rather than guess
        return f"queue {queue!r} cannot be read now ({type(error).__name__})"
    if not serving:
        return f"queue {queue!r}: {ahead} task(s) waiting and no worker serving it (is a {queue} worker running?)"
    return f"queue {queue!r}: {ahead} task(s) waiting, {serving} worker(s) serving it"


def overview():
    """Queues, workers and recent failures for the staff page; each part says when it cannot be read."""
    try:
        lengths = queue_lengths()
    except redis.RedisError as error:
        return {"error": f"the broker ({_safe_url()}) cannot be reached: {error}"}
    try:
        found = workers()
    except Exception as error:
        found, workers_error = [], str(error)
    else:
        workers_error = ""
    rows = [
        {"queue": queue, "waiting": lengths[queue], "workers": [w["name"] for w in found if queue in w["queues"]]}
        for queue in ALL
    ]
    return {"queues": rows, "workers": found, "workers_error": workers_error, "events": recent_events()}


def _safe_url():
    """The broker's host and port, never its password."""
    url = urlparse(_app().conf.broker_url)
    return f"{url.hostname}:{url.port or 6379}"


def hand_out(key, batches):
    """Keep `batches` (lists of ids) in a Redis list, to be taken one at a time by `take_next` (replaces any left)."""
    with client().pipeline() as pipe:
        pipe.delete(key)
        if batches:
            pipe.rpush(key, *(json.dumps(batch) for batch in batches)).expire(key, 7 * 24 * 3600)
        pipe.execute()


def take_next(key):
    """The next batch of `key`, taken atomically (two workers never get the same one); None when none is left."""
    raw = client().lpop(key)
    return json.loads(raw) if raw is not None else None
