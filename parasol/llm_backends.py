"""LLM server backends that do not answer now, as every process sees them, and how their batches wait.

A scoring or generation batch whose server is down (``BackendUnavailable``: timed out, past
its deadline, 408/429/5xx after the backend's own retries) notes it here, in the shared cache,
and its Celery task is retried later with backoff instead of failing; the pages of the stages
that use the backend (a campaign's scoring panel, a generation run) read the note. The next
batch the backend answers clears it.

Scoring notes it per campaign (`campaign`: its pk): a campaign's page says what happened to its
own batches, never another campaign's stale failure on the same backend. Generation notes it
for the backend (no campaign).
"""

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from metrics.backends import BackendUnavailable, ServerClient, catching_pair_failures
from metrics.untrusted import shown

_DOWN = "parasol:llm-backend-down:{}:{}"  # a backend, and the campaign whose work found it down ("" for generation)
_FAILED = "parasol:llm-failure:{}:{}"  # a campaign's metric: its own last failure (the scoring panel)
# A note outlives a few waits (they are 5 minutes apart at most), then lapses if nothing renews it.
_NOTE_SECONDS = 3600
_FAILURE_SECONDS = 7 * 24 * 3600
_LONGEST_WAIT = 300
MESSAGE_CHARS = 300  # a server's words on a page: cut there (the template escapes them)


def _key(backend_name, campaign):
    return _DOWN.format(backend_name, "" if campaign is None else campaign)


def note_down(error: BackendUnavailable, campaign=None, metric=None, **facts):
    """The backend does not answer this campaign's work (or generation's, with no campaign); and, for a
    campaign's metric, its own last failure."""
    cache.set(_key(error.backend_name, campaign), shown(str(error)), timeout=_NOTE_SECONDS)
    if campaign is not None and metric is not None:
        note_failed(campaign, metric, error.backend_name, str(error), waiting=True)


def note_failed(campaign_pk, metric, backend_name, message, waiting=False):
    """Keep a campaign's metric's last failure: when, which backend, the server's words (cleaned, cut), and
    whether its batches wait for the server (unavailable) or the failure was the request's own (a refusal)."""
    failure = {"time": time.time(), "backend": backend_name, "message": shown(str(message))[:MESSAGE_CHARS]}
    cache.set(_FAILED.format(campaign_pk, metric), {**failure, "waiting": waiting}, timeout=_FAILURE_SECONDS)


def note_answered(backend_name, campaign=None, metric=None):
    cache.delete(_key(backend_name, campaign))
    if campaign is not None and metric is not None:
        failure = cache.get(_FAILED.format(campaign, metric))
        if failure and failure["waiting"]:
            cache.set(_FAILED.format(campaign, metric), {**failure, "waiting": False}, timeout=_FAILURE_SECONDS)


def why_down(backend_name, campaign=None):
    """The last failure of this backend (for this campaign's work) while it has not answered since, or None."""
    return cache.get(_key(backend_name, campaign))


def last_failure(campaign_pk, metric):
    """{time, backend, message, waiting} of this campaign's metric's own last failure, or None: never
    another campaign's note about the same backend."""
    return cache.get(_FAILED.format(campaign_pk, metric))


def wait_seconds(retries):
    """Before the next attempt of a batch that waited `retries` times: PARASOL_LLM_BACKEND_WAIT_SECONDS, doubled
    each time, 5 minutes at most."""
    return min(_LONGEST_WAIT, settings.PARASOL_LLM_BACKEND_WAIT_SECONDS * 2**retries)


def retry_when_back(task, error: BackendUnavailable):
    """Raise the retry of a bound Celery `task` whose server did not answer: it waits, it does not fail,
    PARASOL_LLM_BACKEND_WAIT_RETRIES times (then it fails with `error`).

    Run eagerly (no worker), Celery would retry at once, in this process, hundreds of times: `error`
    is raised instead, for the caller to leave the work to a later pass.
    """
    if task.request.is_eager:
        raise error
    raise task.retry(
        exc=error,
        countdown=wait_seconds(task.request.retries),
        max_retries=settings.PARASOL_LLM_BACKEND_WAIT_RETRIES,
    ) from error


# How long a batch to a backend may take.


# A batch may take this much longer than its requests' own bounds (queries, inserts, the shared slots'
# wait behind another batch of the same backend); the hard limit this much past the soft one.
_LIMIT_SLACK = 60
_HARD_AFTER_SOFT = 60


@dataclass(frozen=True)
class Limits:
    """Celery time limits (seconds) of one LLM batch, and the backend whose slowness an overrun means."""

    backend_name: str
    soft: int
    hard: int

    def options(self):
        return {"soft_time_limit": self.soft, "time_limit": self.hard}


def time_limits(backend, requests):
    """`Limits` of a batch of `requests` requests to `backend`: `max_concurrency` at a time, each within its
    timeout, retries and backoffs. A server slower than that is as good as unavailable for this batch."""
    waves = -(-max(1, requests) // backend.max_concurrency)
    per_request = (backend.retries + 1) * backend.timeout + backend.backoff * (2**backend.retries - 1)
    soft = math.ceil(waves * per_request) + _LIMIT_SLACK
    return Limits(backend.name, soft, soft + _HARD_AFTER_SOFT)


def overran(limits: Limits):
    """What a batch that ran past its soft limit means: its server did not serve it in time (it waits, retried)."""
    return BackendUnavailable(
        f"LLM backend {limits.backend_name!r} did not serve the batch within its time limit ({limits.soft} s)",
        limits.backend_name,
    )


# One client per server backend per worker process: every batch's requests share its slots.


class SharedClient(ServerClient):
    """A `ServerClient` whose requests, from every batch and metric of this process, share `max_concurrency`
    slots: a server is fed that many at once (the next batch's requests fill the end of the one before),
    never more, however many batches of it the served worker's threads run together."""

    def __init__(self, backend):
        super().__init__(backend)
        self._slots = ThreadPoolExecutor(max_workers=backend.max_concurrency, thread_name_prefix=f"llm-{backend.name}")

    def map(self, function, items, each_alone=False):
        """As ServerClient.map, the requests in flight bounded by the process's slots of this backend."""
        if each_alone:
            function = catching_pair_failures(function)
        return list(self._slots.map(function, list(items)))


_shared = {}
_shared_lock = threading.Lock()


def shared_client(backend):
    with _shared_lock:
        if _shared.get(backend) is None:
            _shared[backend] = SharedClient(backend)
        return _shared[backend]


def share_client(scorer):
    """Give a scorer that talks to a server the process's one client of that backend (a scorer is built once
    per metric and campaign choice; the slots must be shared across all of them); returns the scorer."""
    client = getattr(scorer, "client", None)
    if isinstance(client, ServerClient) and not isinstance(client, SharedClient):
        scorer.client = shared_client(client.backend)
        client.close()
    return scorer
