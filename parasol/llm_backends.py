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

from django.conf import settings
from django.core.cache import cache

from scoring.metrics.backends import BackendUnavailable
from scoring.metrics.untrusted import shown

_DOWN = "parasol:llm-backend-down:{}:{}"
# A note outlives a few waits (they are 5 minutes apart at most), then lapses if nothing renews it.
_NOTE_SECONDS = 3600
_LONGEST_WAIT = 300


def _key(backend_name, campaign):
    return _DOWN.format(backend_name, "" if campaign is None else campaign)


def note_down(error: BackendUnavailable, campaign=None):
    cache.set(_key(error.backend_name, campaign), shown(str(error)), timeout=_NOTE_SECONDS)


def note_answered(backend_name, campaign=None):
    cache.delete(_key(backend_name, campaign))


def why_down(backend_name, campaign=None):
    """The last failure of this backend (for this campaign's work) while it has not answered since, or None."""
    return cache.get(_key(backend_name, campaign))


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
