"""The Celery queues: where each task goes (routed here once, `CELERY_TASK_ROUTES`), and what is known of them.

Interactive work has queues of its own, so no scoring batch is ever ahead of it:
`reports` (large reports), `training` (span detector retraining), `generation` (LLM
generation runs). Scoring batches go to their metric's queue, `cpu` or `gpu` (the
registry says which), handed out per campaign in turn (scoring/dispatch.py).

A task whose worker process died (SIGKILL, out of memory) runs once more; a third start
is refused and recorded as failed, with its reason, where the pages and the staff page read
it. Celery puts back the task of a pool process that died (acks late, reject on worker
lost), but not those of a worker that died whole (its main process, a solo worker, a lost
machine): Redis keeps those unacknowledged until the visibility timeout, an hour. So each
worker notes which messages it took and says every few seconds that it is alive, and
`requeue_lost` puts back the messages of a worker that stopped saying so.
"""

import json
import logging
import os
import secrets
import threading
import time
from datetime import UTC, datetime
from functools import lru_cache
from urllib.parse import urlparse

import redis
from celery import Task
from django.conf import settings
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
ATTEMPT_KEY = "parasol:attempt:{}:{}"  # starts of one delivery of a task (its id, its retries)
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
    from parasol.celeryapp import app

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
    key = ATTEMPT_KEY.format(task_id, retries)
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
    try:
        held = held_tasks()
    except Exception as error:  # the broker answered the lengths but not this: say so on the page
        held, held_error = [], f"{type(error).__name__}: {error}"
    else:
        held_error = ""
    return {
        "queues": rows,
        "workers": found,
        "workers_error": workers_error,
        "held": held,
        "held_error": held_error,
        "lost_seconds": settings.PARASOL_WORKER_LOST_SECONDS,
        "events": recent_events(),
    }


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


# Workers that died whole. Redis does not know which worker took a message; `note_holder`
# records it when the worker receives it, under the message's delivery tag (kombu's key
# for it in its `unacked` hash, where the message stays until acknowledged).
HOLDERS_KEY = "parasol:task-holders"
ALIVE_KEY = "parasol:worker-alive:{}"
LOST_SWEEP_LOCK = "parasol:lost-worker-sweep"
REQUEUED_REASON = "its worker {node} stopped (no sign of life for {seconds} s): put back in its queue"
# Forget a holder only if it is still the one read: the message may have been taken again meanwhile.
_FORGET_HOLDER = (
    "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('hdel', KEYS[1], ARGV[1]) end"
)
_watch = {}
_watch_lock = threading.Lock()


def watch_this_worker(hostname):
    """Start saying that this worker is alive and looking for dead ones (once per process); returns its id.

    The id names this incarnation (node name, pid, a random token): a node restarted under the
    same name is another worker, so its predecessor's messages are still put back.
    """
    with _watch_lock:
        if _watch.get("pid") != os.getpid():
            worker = f"{hostname}/{os.getpid()}/{secrets.token_hex(4)}"
            _say_alive(worker)  # before any message is recorded as held by it
            threading.Thread(target=_watch_loop, args=(worker,), name="parasol-worker-watch", daemon=True).start()
            _watch.update(pid=os.getpid(), worker=worker)
        return _watch["worker"]


def note_holder(request):
    """Celery's task_received (in the worker's main process): remember who took this message and what it is."""
    try:
        worker = watch_this_worker(request.hostname)
        facts = request.task.facts(request.args) if isinstance(request.task, WatchedTask) else {}
        record_holder(request.message.delivery_tag, worker, request.hostname, request.name, request.id, facts)
    except redis.RedisError as error:  # the message is still safe: the visibility timeout puts it back
        logger.warning("Could not record that %s took %s: %s", request.hostname, request.id, error)


def record_holder(delivery_tag, worker, node, task, task_id, facts):
    """Worker `worker` (of node `node`) took the message `delivery_tag` of task `task` (its facts for the pages)."""
    held = {"worker": worker, "node": node, "task": task, "id": task_id, "facts": facts, "since": time.time()}
    client().hset(HOLDERS_KEY, delivery_tag, json.dumps(held))


def _say_alive(worker):
    client().set(ALIVE_KEY.format(worker), time.time(), ex=settings.PARASOL_WORKER_LOST_SECONDS)


def _watch_loop(worker):
    while True:
        try:
            _say_alive(worker)
            requeue_lost()
        except Exception:  # a Redis outage or restart: try again next time; the thread must not end
            logger.exception("The lost-worker watch could not run; trying again")
        time.sleep(settings.PARASOL_WORKER_LOST_SECONDS / 3)


def requeue_lost():
    """Put back in its queue every message held by a worker no longer alive; returns how many.

    One sweep at a time in the whole deployment (a lock): a message is put back once, then taken
    (and recorded) by whichever worker is next. Holders of messages acknowledged since are forgotten.
    """
    r = client()
    lock = r.lock(LOST_SWEEP_LOCK, timeout=60)
    if not lock.acquire(blocking=False):
        return 0
    try:
        held = r.hgetall(HOLDERS_KEY)
        if not held:
            return 0
        with _app().connection_for_write() as connection:
            return _requeue(r, connection.default_channel, held)
    finally:
        try:
            lock.release()
        except redis.exceptions.LockNotOwnedError:
            pass


def _unacked(channel, tags):
    """{tag: whether the broker still holds that message unacknowledged} (kombu's `unacked` hash, via its channel)."""
    with channel.client.pipeline() as pipe:
        for tag in tags:
            pipe.hexists(channel.unacked_key, tag)
        return dict(zip(tags, pipe.execute(), strict=True))


def _requeue(r, channel, held):
    tags = list(held)
    unacked = _unacked(channel, tags)
    holders = {tag: json.loads(held[tag]) for tag in tags}
    workers = sorted({holder["worker"] for holder in holders.values()})
    with r.pipeline() as pipe:
        for worker in workers:
            pipe.exists(ALIVE_KEY.format(worker))
        alive = dict(zip(workers, pipe.execute(), strict=True))
    requeued = 0
    for tag, holder in holders.items():
        if unacked[tag] and not alive[holder["worker"]]:
            channel.qos.restore_by_tag(tag.decode())  # to the head of its queue: it was someone's turn already
            reason = REQUEUED_REASON.format(node=holder["node"], seconds=settings.PARASOL_WORKER_LOST_SECONDS)
            record_event("requeued", holder["task"], reason, **holder["facts"])
            requeued += 1
        if not unacked[tag] or not alive[holder["worker"]]:
            r.eval(_FORGET_HOLDER, 1, HOLDERS_KEY, tag, held[tag])
    return requeued


def held_tasks():
    """[{node, task, facts, since, alive}] of the messages workers took and have not acknowledged (the staff page)."""
    r = client()
    held = r.hgetall(HOLDERS_KEY)
    if not held:
        return []
    with _app().connection_for_write() as connection:
        unacked = _unacked(connection.default_channel, list(held))
    rows = [json.loads(raw) for tag, raw in held.items() if unacked[tag]]
    for row in rows:
        row["alive"] = bool(r.exists(ALIVE_KEY.format(row["worker"])))
        row["when"] = datetime.fromtimestamp(row["since"], tz=UTC)
    return sorted(rows, key=lambda row: row["since"])
