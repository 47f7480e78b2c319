"""The Celery queues, and what is known of them (each task is routed to one by `scoring.routing`).

Interactive work has queues of its own, so no scoring batch is ever ahead of it:
`reports` (large reports), `training` (span detector retraining), `generation` (LLM
generation runs). Scoring batches go to their metric's queue, `cpu` or `gpu` (the
registry says which), handed out per campaign in turn (scoring/dispatch.py), except those
of an LLM metric whose campaign asks a server backend: they go to `served`, whose worker
runs many batches at once on threads (the work is waiting on a server, not computing), so
a served campaign never waits behind another's in-process model batches.

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
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.cache import cache

from metrics.registry import CPU, GPU

logger = logging.getLogger(__name__)

REPORTS = "reports"
TRAINING = "training"
GENERATION = "generation"
SERVED = "served"  # batches of LLM metrics whose campaign's backend is a server (I/O: a threads worker)
SCORING = (CPU, GPU, SERVED)
ALL = (REPORTS, TRAINING, GENERATION, *SCORING)

QUEUED = "queued for a worker"  # the stage of a report or a training no worker has taken yet
LOST_REASON = "its worker process died twice while running it (killed, or out of memory)"
EVENTS_KEPT = 200
EVENTS_KEY = "parasol:task-events"
ATTEMPT_KEY = "parasol:attempt:{}:{}"  # starts of one delivery of a task (its id, its retries)
WORKERS_CACHE_SECONDS = 15


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
    it on a page (`facts`). A task that asks an LLM server names `time_limits` (a function of its
    arguments, in its decorator): each send gets Celery soft and hard time limits from it, and a
    batch past its soft limit waits for its server, as one it could not reach does.
    """

    time_limits = None  # args -> parasol.llm_backends.Limits or None; staticmethod(...) in the decorator

    def apply_async(self, args=None, kwargs=None, **options):
        if self.time_limits is not None and args and "soft_time_limit" not in options:
            try:
                limits = self.time_limits(args)
            except Exception:  # routing reads the same row and says why; the batch goes without limits
                logger.exception("Could not derive the time limits of %s", self.name)
                limits = None
            if limits is not None:
                options.update(limits.options())
        return super().apply_async(args, kwargs, **options)

    def __call__(self, *args, **kwargs):
        request = self.request
        if not request.called_directly and not request.is_eager:
            if not still_held_here(request):
                reason = STEPPED_ASIDE.format(node=request.hostname)
                record_event("stepped aside", self.name, reason, **self.facts(args))
                return None
            claim(request)
            attempt = _start_attempt(request.id, request.retries)
            if attempt == 2:
                record_event("retried", self.name, "its worker process died while running it", **self.facts(args))
            elif attempt and attempt > 2:
                self._give_up(args, LOST_REASON)
                return None
        try:
            return super().__call__(*args, **kwargs)
        except SoftTimeLimitExceeded:
            limits = self.time_limits(args) if self.time_limits is not None else None
            if limits is None:
                raise
            from parasol import llm_backends

            error = llm_backends.overran(limits)
            llm_backends.note_down(error, **self.facts(args))
            llm_backends.retry_when_back(self, error)

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
#
# A worker is declared lost only on evidence gathered while the broker answered: its last sign
# of life is older than PARASOL_WORKER_LOST_SECONDS by the broker's own clock, the sweeping worker
# has itself reached the broker without a break for that long (a Redis outage silences every
# worker alike: none is lost for it), and the lost worker's node does not answer Celery's ping.
# A worker paused past that (SIGSTOP, a frozen VM) and resumed finds its message handed over
# (`still_held_here`) and steps aside rather than running it beside its replacement.
HOLDERS_KEY = "parasol:task-holders"
SEEN_KEY = "parasol:workers-seen"  # {worker: the broker's time of its last sign of life}
# Keyed by task id (a running task knows its id, not its message's delivery tag):
HANDED_OVER_KEY = "parasol:handed-over:{}"  # a requeued task: the node it was taken from
TAKEN_BY_KEY = "parasol:taken-by:{}"  # the node that took the task's message last
CLAIM_KEY = "parasol:claim:{}"  # the token of the execution that runs the task now
LOST_SWEEP_LOCK = "parasol:lost-worker-sweep"
REQUEUED_REASON = (
    "its worker {node} stopped: no sign of life for {seconds} s while the broker answered, and no answer to a "
    "ping (paused or died): put back in its queue"
)
STEPPED_ASIDE = "its worker {node} resumed after the batch had been handed to another worker: not run twice"
BROKER_LOST = "worker {node} could not reach the broker for {seconds} s; no worker is declared lost for that"
PAUSED = "worker {node} was paused (or starved of CPU) for {seconds} s; what it held may have been handed over"
PING_SECONDS = 1.0
SEEN_FORGOTTEN_SECONDS = 7 * 24 * 3600
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
            contact = BrokerContact()
            args = (worker, hostname, contact)
            threading.Thread(target=_watch_loop, args=args, name="parasol-worker-watch", daemon=True).start()
            _watch.update(pid=os.getpid(), worker=worker)
        return _watch["worker"]


def note_holder(request):
    """Celery's task_received (in the worker's main process): remember who took this message and what it is."""
    try:
        worker = watch_this_worker(request.hostname)
        facts = request.task.facts(request.args) if isinstance(request.task, WatchedTask) else {}
        expected = _expected_seconds(request)
        record_holder(request.message.delivery_tag, worker, request.hostname, request.name, request.id, facts, expected)
    except redis.RedisError as error:  # the message is still safe: the visibility timeout puts it back
        logger.warning("Could not record that %s took %s: %s", request.hostname, request.id, error)


def record_holder(delivery_tag, worker, node, task, task_id, facts, expected=None):
    """Worker `worker` (of node `node`) took the message `delivery_tag` of task `task` (its facts for the pages);
    `expected`: the seconds past which the staff page flags it as held too long."""
    held = {"worker": worker, "node": node, "task": task, "id": task_id, "facts": facts, "since": time.time()}
    with client().pipeline() as pipe:
        pipe.hset(HOLDERS_KEY, delivery_tag, json.dumps({**held, "expected": expected}))
        pipe.set(TAKEN_BY_KEY.format(task_id), node, ex=SEEN_FORGOTTEN_SECONDS).execute()


# A scoring batch is sized to take PARASOL_SCORING_BATCH_SECONDS: held this many times longer, it is flagged.
HELD_TOO_LONG = 5


def _expected_seconds(request):
    """How long the task should be held: its soft time limit (an LLM batch), a scoring batch's
    sized time a few times over, else None (reports and trainings take what they take)."""
    hard, soft = (tuple(request.time_limits or ()) + (None, None))[:2]
    if soft or hard:
        return soft or hard
    if request.name.startswith("scoring.tasks.score_batch"):
        return settings.PARASOL_SCORING_BATCH_SECONDS * HELD_TOO_LONG
    return None


def claim(request):
    """This execution takes its task over (before the work): an earlier execution of the same task still
    running (redelivered by kombu after a broker outage, or a worker resumed after its batch was handed over)
    finds the claim changed at its next check and steps aside."""
    if not request.id:
        return
    token = secrets.token_hex(8)
    try:
        client().set(CLAIM_KEY.format(request.id), token, ex=SEEN_FORGOTTEN_SECONDS)
    except redis.RedisError:  # no claim without a broker: the upsert repairs a double
        return
    request.parasol_claim = token


def still_held_here(request):
    """Whether the task this execution runs is still its own: False once another execution claimed it, or its
    message was handed to another node (or put back for one) because this one looked lost. Checked before the
    work and between its parts; True when it cannot be told (no broker now, a task run outside a worker)."""
    if not request.id:
        return True
    token = getattr(request, "parasol_claim", None)
    try:
        r = client()
        taken_by, handed_from = r.get(TAKEN_BY_KEY.format(request.id)), r.get(HANDED_OVER_KEY.format(request.id))
        claimed = r.get(CLAIM_KEY.format(request.id)) if token else None
    except redis.RedisError:
        return True
    if token and claimed is not None and claimed.decode() != token:
        return False
    if taken_by is not None:
        return taken_by.decode() == request.hostname
    return handed_from is None or handed_from.decode() != request.hostname


def _say_alive(worker):
    r = client()
    seconds, micros = r.time()
    r.hset(SEEN_KEY, worker, seconds + micros / 1e6)


class BrokerContact:
    """How long this process has reached the broker without a break: the only time in which another
    worker's silence means anything. A break is a failed call ("broker lost"), or this process itself not
    running for half the limit between two rounds of its watch ("paused": SIGSTOP, a frozen VM)."""

    def __init__(self):
        self.since = self.last = self.failed_at = None

    def failed(self, now=None):
        if self.failed_at is None:
            self.failed_at = time.monotonic() if now is None else now

    def reached(self, now=None):
        """The broker answered now; returns (what broke, seconds) if a break just ended, else None."""
        now = time.monotonic() if now is None else now
        broke = None
        if self.failed_at is not None:
            broke = ("broker lost", now - self.failed_at)
        elif self.last is not None and now - self.last > _pause_seconds():
            broke = ("paused", now - self.last)
        if self.since is None or broke:
            self.since = now
        self.failed_at = None
        return broke

    def done(self, now=None):
        """A round of the watch ended (its own work, a ping's wait included, is not a pause)."""
        self.last = time.monotonic() if now is None else now

    def seconds(self, now=None):
        now = time.monotonic() if now is None else now
        return 0.0 if self.since is None else now - self.since


def _interval():
    return settings.PARASOL_WORKER_LOST_SECONDS / 3


def _pause_seconds():
    """A gap between two rounds of the watch longer than this (past its sleep) is a pause, not a busy machine."""
    return _interval() + settings.PARASOL_WORKER_LOST_SECONDS / 2


def _watch_loop(worker, node, contact):
    while True:
        try:
            _say_alive(worker)
        except Exception:  # a Redis outage or restart: try again next time; the thread must not end
            contact.failed()
            logger.warning("The lost-worker watch cannot reach the broker; trying again", exc_info=True)
        else:
            try:
                broke = contact.reached()
                if broke is not None:
                    what, seconds = broke
                    words = BROKER_LOST if what == "broker lost" else PAUSED
                    record_event(what, "", words.format(node=node, seconds=round(seconds)), node=node)
                requeue_lost(contact.seconds())
                contact.done()
            except Exception:
                contact.failed()
                logger.exception("The lost-worker watch could not run; trying again")
        time.sleep(_interval())


def requeue_lost(contact_seconds):
    """Put back in its queue every message held by a worker found lost; returns how many.

    `contact_seconds`: how long the caller has reached the broker without a break; under
    PARASOL_WORKER_LOST_SECONDS it knows nothing of the others' silence and declares none lost.
    One sweep at a time in the whole deployment (a lock): a message is put back once, then taken
    (and recorded) by whichever worker is next. Holders of messages acknowledged since are forgotten.
    """
    if contact_seconds < settings.PARASOL_WORKER_LOST_SECONDS:
        return 0
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


def _silent_workers(r, workers):
    """The workers of `workers` whose last sign of life is older than the limit, by the broker's clock."""
    seconds, micros = r.time()
    now = seconds + micros / 1e6
    seen = dict(zip(workers, r.hmget(SEEN_KEY, workers), strict=True)) if workers else {}
    return {w for w, at in seen.items() if at is None or now - float(at) > settings.PARASOL_WORKER_LOST_SECONDS}


def _answering(nodes):
    """The nodes of `nodes` that answer Celery's ping now (a busy worker's main process does; a paused one not)."""
    if not nodes:
        return set()
    try:
        replies = _app().control.ping(destination=sorted(nodes), timeout=PING_SECONDS) or []
    except Exception:  # no answer can be had: the heartbeat's evidence stands
        return set()
    return {name for reply in replies for name in reply}


def _requeue(r, channel, held):
    tags = list(held)
    unacked = _unacked(channel, tags)
    holders = {tag: json.loads(held[tag]) for tag in tags}
    silent = _silent_workers(r, sorted({holder["worker"] for holder in holders.values()}))
    answering = _answering({holder["node"] for holder in holders.values() if holder["worker"] in silent})
    nodes = {holder["worker"]: holder["node"] for holder in holders.values()}
    lost = {worker for worker in silent if nodes[worker] not in answering}
    requeued = 0
    for tag, holder in holders.items():
        if unacked[tag] and holder["worker"] in lost:
            with r.pipeline() as pipe:  # put back for another node: the one it was taken from steps aside
                pipe.set(HANDED_OVER_KEY.format(holder["id"]), holder["node"], ex=SEEN_FORGOTTEN_SECONDS)
                pipe.delete(TAKEN_BY_KEY.format(holder["id"])).execute()
            channel.qos.restore_by_tag(tag.decode())  # to the head of its queue: it was someone's turn already
            reason = REQUEUED_REASON.format(node=holder["node"], seconds=settings.PARASOL_WORKER_LOST_SECONDS)
            record_event("requeued", holder["task"], reason, **holder["facts"])
            requeued += 1
        if not unacked[tag] or holder["worker"] in lost:
            r.eval(_FORGET_HOLDER, 1, HOLDERS_KEY, tag, held[tag])
    _forget_old_workers(r)
    return requeued


def _forget_old_workers(r):
    seconds, _ = r.time()
    old = [w for w, at in r.hgetall(SEEN_KEY).items() if seconds - float(at) > SEEN_FORGOTTEN_SECONDS]
    if old:
        r.hdel(SEEN_KEY, *old)


def held_tasks():
    """[{node, task, facts, since, alive}] of the messages workers took and have not acknowledged (the staff page)."""
    r = client()
    held = r.hgetall(HOLDERS_KEY)
    if not held:
        return []
    with _app().connection_for_write() as connection:
        unacked = _unacked(connection.default_channel, list(held))
    rows = [json.loads(raw) for tag, raw in held.items() if unacked[tag]]
    silent = _silent_workers(r, sorted({row["worker"] for row in rows}))
    now = time.time()
    for row in rows:
        row["alive"] = row["worker"] not in silent
        row["when"] = datetime.fromtimestamp(row["since"], tz=UTC)
        row["held_seconds"] = round(now - row["since"])
        row["too_long"] = bool(row.get("expected")) and row["held_seconds"] > row["expected"]
    return sorted(rows, key=lambda row: row["since"])
