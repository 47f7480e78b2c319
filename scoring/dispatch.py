"""Fair shares of the scoring workers: each campaign's batches are handed out in turn.

Nothing is queued in bulk. Per campaign and queue at most PARASOL_SCORING_BATCHES_PER_CAMPAIGN
batches wait in the queue (or run) at once, and each batch that finishes queues that campaign's
next one on that queue, its metrics taken in turn. A queue is first come, first served, so a
campaign's new batch waits behind at most that many batches of each other campaign: one
researcher's 400,000 pairs hold another's 60 back by a few batches, not by all of theirs, and a
campaign's share does not shrink when it has fewer metrics left to score than another.

The state of a (campaign, metric) pass is a Redis hash on the broker: `cursor` (the last pair pk
handed out), `inflight` (batches queued or running), `turn` (when it was last handed a batch),
`queue`, and `rewind` (where to start again once the pass ends, when the sweep found pairs behind
the cursor). A campaign's passes on one queue are listed in its share (a Redis set) and changed
under the share's Redis lock. Both expire when nothing touches them for longer than a task may
take (a batch lost with a flushed Redis); the periodic sweep then starts the campaign's pass again.

Batches are sized by time, not pairs: the recent speed of each metric (pairs per second
of a worker) times PARASOL_SCORING_BATCH_SECONDS, never more than the configured sizes, so
an LLM batch ends in bounded time on whatever device the workers have. A batch for a server
backend is a whole number of its `max_concurrency` (one "wave" at least): the server is fed
as many requests as it serves at once, and its speed is measured apart from in-process runs.
"""

import base64
import json
import threading
import time

import redis
from django.conf import settings
from django.db.models import Min

from campaigns.llm_choice import served_by
from campaigns.models import Campaign, Pair
from metrics.registry import GPU, METRICS, queue_of, uses_llm_backend
from parasol.progress import duration_words as _duration
from parasol.queues import client, recent_events

from . import service
from .routing import scoring_queue

# A metric not yet measured starts with batches this small on the LLM queue (its speed is unknown).
FIRST_LLM_BATCH = 4
RATE_WINDOW_SECONDS = 600
SPEEDS_KEPT = 20


def _pass_key(metric, campaign_pk):
    return f"parasol:scoring-pass:{metric}:{campaign_pk}"


def _share_key(queue, campaign_pk):
    """The campaign's share of one queue: the set of its metrics with a pass there (and, beside it, its lock
    and the counter that takes the passes in turn)."""
    return f"parasol:scoring-share:{queue}:{campaign_pk}"


def _queue_of_pass(metric, campaign_pk):
    return scoring_queue("scoring.tasks.score_batch", [metric, [], campaign_pk], {})


def start_pass(campaign_pk, metric, from_pk, send):
    """Score the campaign's pairs from `from_pk` on, a few batches at a time.

    `send(metric, campaign_pk, pks)` queues one batch.
    """
    key = _pass_key(metric, campaign_pk)
    queue = _queue_of_pass(metric, campaign_pk)
    share = _share_key(queue, campaign_pk)
    with _locked(share) as r:
        state = r.hgetall(key)
        if not state:
            r.hset(key, mapping={"cursor": from_pk - 1, "inflight": 0, "turn": 0, "queue": queue})
        elif from_pk - 1 < int(state[b"cursor"]):  # behind the cursor: once this pass ends
            rewind = min(from_pk - 1, int(state.get(b"rewind", from_pk - 1)))
            r.hset(key, "rewind", rewind)
        r.sadd(share, metric)
        _top_up(r, share, campaign_pk, send)


def finished(campaign_pk, metric, send):
    """A batch of this campaign ended (scored, or given up): queue its next one on that queue."""
    key = _pass_key(metric, campaign_pk)
    # The queue the pass was started on (a backend changed meanwhile moves its next pass, not this one).
    queue = client().hget(key, "queue")
    share = _share_key(queue.decode() if queue else _queue_of_pass(metric, campaign_pk), campaign_pk)
    with _locked(share) as r:
        if r.exists(key):
            r.hset(key, "inflight", max(0, int(r.hget(key, "inflight") or 0) - 1))
        _top_up(r, share, campaign_pk, send)


def _top_up(r, share, campaign_pk, send):
    """Queue the campaign's next batches on the share's queue until it has PARASOL_SCORING_BATCHES_PER_CAMPAIGN
    there, taking its metrics' passes in turn (the one with the fewest batches out, then the one served longest
    ago). The share is the campaign's, not each metric's: a campaign with one slow metric left gets as many
    places in the queue as one scoring four metrics."""
    passes = {}
    for raw in r.smembers(share):
        metric = raw.decode()
        state = r.hgetall(_pass_key(metric, campaign_pk))
        if state:
            passes[metric] = {"turn": 0} | {
                name.decode(): int(value) for name, value in state.items() if name != b"queue"
            }
        else:  # expired with nothing touching it (a batch lost with a flushed Redis): the sweep starts it again
            r.srem(share, metric)
    inflight = sum(state["inflight"] for state in passes.values())
    waiting = dict(passes)  # the passes that may still have a batch to hand out
    while inflight < settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN and waiting:
        metric = min(waiting, key=lambda m: (waiting[m]["inflight"], waiting[m]["turn"], m))
        state = waiting[metric]
        batch = _next_of_pass(r, metric, campaign_pk, state)
        if not batch:
            del waiting[metric]
            continue
        send(metric, campaign_pk, batch)
        state.update(cursor=batch[-1], inflight=state["inflight"] + 1, turn=r.incr(f"{share}:turn"))
        r.hset(_pass_key(metric, campaign_pk), mapping={k: state[k] for k in ("cursor", "inflight", "turn")})
        inflight += 1
    ttl = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] + 600
    for metric, state in passes.items():
        key = _pass_key(metric, campaign_pk)
        if state["inflight"] == 0 and metric not in waiting:  # nothing out, nothing left: the pass is complete
            r.delete(key)
            r.srem(share, metric)
        else:
            r.expire(key, ttl)
    r.expire(share, ttl)
    r.expire(f"{share}:turn", ttl)


def _next_of_pass(r, metric, campaign_pk, state):
    """The pass's next batch; when its pass is over, it goes back for what the sweep found behind it (`rewind`)."""
    size = batch_size(metric, campaign_pk)
    while True:
        batch = next_batch(campaign_pk, state["cursor"], size)
        if batch or "rewind" not in state:
            return batch
        state["cursor"] = state.pop("rewind")
        r.hdel(_pass_key(metric, campaign_pk), "rewind")
        r.hset(_pass_key(metric, campaign_pk), "cursor", state["cursor"])


def next_batch(campaign_pk, after, size):
    """The pks of the campaign's next `size` scorable pairs after pk `after` (scored ones are skipped by the task).

    When fewer than half a batch would be left after them, they come too: a last batch of a few pairs
    would wait a whole round of the queue behind the other campaigns' batches for seconds of work.
    """
    pairs = service.scorable_pairs().filter(campaign_id=campaign_pk, pk__gt=after).order_by("pk")
    most = size + size // 2
    pks = list(pairs.values_list("pk", flat=True)[: most + 1])
    return pks if len(pks) <= most else pks[:size]


def first_unscored(metric, signature, campaign_pk=None):
    """{campaign pk: its first pair pk missing this metric's score} (the sweep's start points), or of one campaign."""
    missing = service.pairs_missing(metric, signature)
    if campaign_pk is not None:
        missing = missing.filter(campaign_id=campaign_pk)
    missing = missing.order_by().values("campaign_id").annotate(first=Min("pk"))
    return {row["campaign_id"]: row["first"] for row in missing}


def first_pk_by_campaign(pair_pks):
    """{campaign pk: its lowest pk among `pair_pks`}."""
    rows = Pair.objects.filter(pk__in=pair_pks).order_by().values("campaign_id").annotate(first=Min("pk"))
    return {row["campaign_id"]: row["first"] for row in rows}


# The share's lock is a lease: its holder renews it every third of LEASE_SECONDS while it works, so a holder
# killed mid-way (SIGKILL, out of memory) frees it within LEASE_SECONDS, not after a fixed two minutes during
# which every dispatcher of the campaign (a web request's import, each batch that ends) waited a minute and gave up.
LEASE_SECONDS = 10
LOCK_WAIT_SECONDS = 60


class _locked:
    """The pass's Redis lock, held while its state is read and changed (dispatchers in web and workers race)."""

    def __init__(self, key):
        self.redis = client()
        # thread_local=False: the renewing thread must see the token this thread acquired it with.
        self.lock = self.redis.lock(
            f"{key}:lock", timeout=LEASE_SECONDS, blocking_timeout=LOCK_WAIT_SECONDS, thread_local=False
        )
        self._done = threading.Event()
        self._renewer = None

    def __enter__(self):
        if not self.lock.acquire():
            raise redis.exceptions.LockError(f"{self.lock.name} held for over {LOCK_WAIT_SECONDS} s")
        self._renewer = threading.Thread(target=self._renew, name="parasol-share-lease", daemon=True)
        self._renewer.start()
        return self.redis

    def _renew(self):
        while not self._done.wait(LEASE_SECONDS / 3):
            try:
                self.lock.reacquire()  # its time to live back to LEASE_SECONDS
            except redis.exceptions.RedisError:  # lost (this process was frozen past it) or Redis away: stop
                return

    def __exit__(self, *exc):
        self._done.set()
        self._renewer.join()
        try:
            self.lock.release()
        except redis.exceptions.LockNotOwnedError:
            pass  # it expired while held: the state was written all the same


def batch_size(metric, campaign_pk=None):
    """Pairs per batch: what a worker scores in PARASOL_SCORING_BATCH_SECONDS at the metric's recent speed;
    for a server backend, that in whole waves of its `max_concurrency` (one wave before any is measured)."""
    served = served_by(metric, campaign_pk)
    largest = service.batch_size(metric)
    speed = worker_speed(metric, served)
    if served is not None:
        wave = served.max_concurrency
        waves = 1 if speed is None else int(speed * settings.PARASOL_SCORING_BATCH_SECONDS) // wave
        return wave * max(1, min(waves, largest // wave))
    if speed is None:
        return min(FIRST_LLM_BATCH, largest) if queue_of(metric) == GPU else largest
    return max(1, min(largest, int(speed * settings.PARASOL_SCORING_BATCH_SECONDS)))


def record_batch(campaign_pk, metric, n_scored, seconds):
    """Remember a batch's speed (batch sizes) and when it ended (the campaign's rate); a Redis outage forgets it."""
    if not n_scored:
        return
    now = time.time()
    served = served_by(metric, campaign_pk)
    try:
        with client().pipeline() as pipe:
            speed = _speed_key(metric, served)
            pipe.lpush(speed, json.dumps([n_scored, seconds])).ltrim(speed, 0, SPEEDS_KEPT - 1)
            if campaign_pk is not None:
                rate = _rate_key(metric, campaign_pk)
                pipe.lpush(rate, json.dumps([now, n_scored, seconds])).ltrim(rate, 0, 199).expire(rate, 86400)
            pipe.execute()
    except redis.RedisError:
        pass


def worker_speed(metric, served=None):
    """Pairs per second one worker scored in the metric's recent batches (through server backend `served`,
    else in-process); None before any."""
    try:
        rows = [json.loads(raw) for raw in client().lrange(_speed_key(metric, served), 0, SPEEDS_KEPT - 1)]
    except redis.RedisError:
        return None
    seconds = sum(row[1] for row in rows)
    return sum(row[0] for row in rows) / seconds if rows and seconds > 0 else None


def recent_rate(campaign_pk, metric, now=None):
    """Pairs per second scored for the campaign over the last few minutes (all workers together); None if none."""
    now = now or time.time()
    try:
        rows = [json.loads(raw) for raw in client().lrange(_rate_key(metric, campaign_pk), 0, 199)]
    except redis.RedisError:
        return None
    recent = [row for row in rows if row[0] > now - RATE_WINDOW_SECONDS]
    if not recent:
        return None
    since = min(end - seconds for end, _n, seconds in recent)
    return sum(n for _end, n, _seconds in recent) / max(now - since, 1.0)


def batches_in_flight(campaign_pk, metric):
    try:
        return int(client().hget(_pass_key(metric, campaign_pk), "inflight") or 0)
    except redis.RedisError:
        return None


def _speed_key(metric, served=None):
    """A server's speed is its own: a vLLM's batches must not size an in-process model's, nor the reverse."""
    return f"parasol:scoring-speed:{metric}" + (f":{served.name}" if served is not None else "")


def _rate_key(metric, campaign_pk):
    return f"parasol:scoring-rate:{metric}:{campaign_pk}"


def live_progress(campaign):
    """`service.scoring_progress` with, per metric, the recent rate, the time left and the batches in flight,
    and the batches of this campaign retried or given up after their worker died; per LLM metric also its
    backend, the batches of other campaigns ahead of this one's in its queue, and this campaign's own last
    failure (never another campaign's note about the same backend).

    Only stored scores and a few Redis reads: the web process never loads a model. Without
    Redis the counts are still right; the live facts say they cannot be read.
    """
    progress = service.scoring_progress(campaign)
    for row in progress["metrics"]:
        llm = row["metric"] in METRICS and uses_llm_backend(row["metric"])
        row["backend"] = campaign.llm_backend_name(row["metric"]) if llm else None
        row["failure"] = service.campaign_failure(campaign, row["metric"]) if row["metric"] in METRICS else None
    try:
        client().ping()
    except redis.RedisError as error:
        progress["live_error"] = f"the broker cannot be reached ({type(error).__name__}): rates unknown"
        return progress
    for row in progress["metrics"]:
        left = progress["total"] - row["scored"]
        rate = recent_rate(campaign.pk, row["metric"])
        row["rate"] = rate
        row["rate_words"] = rate_words(rate)
        # A time left only beside a rate that is not nothing: "unknown" otherwise, never a guess.
        row["time_left"] = _duration(left / rate) if rate and left > 0 else ("unknown" if left > 0 else None)
        row["in_flight"] = batches_in_flight(campaign.pk, row["metric"])
        if row["metric"] in METRICS:
            row["queue"] = scoring_queue("scoring.tasks.score_batch", [row["metric"], [], campaign.pk], {})
            row["ahead"] = batches_ahead(row["queue"], campaign.pk, row["metric"]) if left > 0 else 0
    progress["events"] = recent_events(campaign=campaign.pk)[:10]
    return progress


def rate_words(rate):
    """Pairs per second, minute or hour, with two or three meaningful digits: never "0.0 pairs/s"."""
    if not rate or rate <= 0:
        return None
    for per, unit in ((1, "s"), (60, "min"), (3600, "h")):
        value = rate * per
        if value >= 1 or unit == "h":
            break
    digits = f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{digits} pairs/{unit}"


# The most messages read to count the batches ahead (a queue holds a few batches per campaign).
AHEAD_READ = 2000


def batches_ahead(queue, campaign_pk, metric):
    """Batches of other campaigns waiting in `queue` ahead of this campaign's oldest waiting batch of
    `metric` (0 when none of its batches waits: they run); None when the queue cannot be read.

    kombu keeps a queue as a Redis list, published on the left and taken on the right: the oldest last.
    """
    try:
        raw = client().lrange(queue, -AHEAD_READ, -1)
    except redis.RedisError:
        return None
    ahead = 0
    for message in reversed(raw):
        args = _batch_args(message)
        if args is None:
            continue
        if args[2] == campaign_pk and args[0] == metric:
            return ahead
        if args[2] != campaign_pk:
            ahead += 1
    return 0


def _batch_args(message):
    """(metric, pair pks, campaign pk) of a queued score_batch message; None for another task or an unreadable one."""
    try:
        envelope = json.loads(message)
        if envelope.get("headers", {}).get("task") != "scoring.tasks.score_batch":
            return None
        args = json.loads(base64.b64decode(envelope["body"]))[0]
        return (*args, None)[:3]
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def scoring_passes():
    """[{campaign, metric, rate, in_flight}] of every campaign being scored or scored lately (the staff page)."""
    r = client()
    found = {}
    for pattern, at in (("parasol:scoring-rate:*", 2), ("parasol:scoring-pass:*", 2)):
        for key in r.scan_iter(match=pattern, count=500):
            parts = key.decode().split(":")
            if len(parts) == 4 and parts[3].isdigit():
                found[(int(parts[3]), parts[at])] = True
    campaigns = dict(Campaign.objects.filter(pk__in={pk for pk, _ in found}).values_list("pk", "slug"))
    rows = [
        {
            "campaign": campaigns.get(pk, f"#{pk} (deleted)"),
            "metric": metric,
            "rate": recent_rate(pk, metric),
            "rate_words": rate_words(recent_rate(pk, metric)),
            "in_flight": batches_in_flight(pk, metric),
        }
        for pk, metric in sorted(found)
    ]
    return [row for row in rows if row["rate"] or row["in_flight"]]
