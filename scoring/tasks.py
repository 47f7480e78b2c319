"""Thin Celery tasks (take ids, call one service function) and the helpers that queue them.

Tasks import the service, never the reverse: queueing lives here, beside the tasks it queues.
Each task's queue is decided once, in scoring.routing (CELERY_TASK_ROUTES); the batches of
each campaign are handed out in turn by scoring.dispatch.
"""

import logging
import time

from celery import shared_task
from django.db import OperationalError, transaction

from campaigns.llm_choice import served_by
from campaigns.models import Campaign
from metrics.backends import BackendUnavailable
from metrics.base import MetricUnavailable
from metrics.registry import requests_per_pair
from parasol import llm_backends
from parasol.queues import STEPPED_ASIDE, WatchedTask, record_event, still_held_here

from . import dispatch, service

logger = logging.getLogger(__name__)


class ScoringTask(WatchedTask):
    """A batch given up (its worker died twice, or it failed) frees its campaign's place for the next one."""

    def facts(self, args):
        metric, pair_pks, campaign_pk = (*args, None)[:3]
        pairs = f"{min(pair_pks)}-{max(pair_pks)}" if pair_pks else "none"
        return {"metric": metric, "campaign": campaign_pk, "pairs": pairs}

    def given_up(self, args, reason):
        metric, _pair_pks, campaign_pk = (*args, None)[:3]
        if campaign_pk is not None:
            dispatch.finished(campaign_pk, metric, send=send_batch)


def scoring_time_limits(args):
    """`Limits` of a score_batch(metric, pair_pks, campaign_pk) whose metric goes to a server; None otherwise."""
    metric, pair_pks, campaign_pk = (*args, None)[:3]
    return _served_limits(served_by(metric, campaign_pk), metric, pair_pks)


def _served_limits(backend, metric, pair_pks):
    """`Limits` of a batch of `pair_pks` sent to the server `backend` (None: not served, no limits)."""
    return llm_backends.time_limits(backend, len(pair_pks) * requests_per_pair(metric)) if backend else None


@shared_task(
    base=ScoringTask,
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
    time_limits=staticmethod(scoring_time_limits),
)
def score_batch(self, metric, pair_pks, campaign_pk=None):
    """Score one batch of pairs (skipping those scored or deleted), then queue the campaign's next batch.

    An LLM server that does not answer, or does not serve the batch within its time limit, makes the
    batch wait (parasol.llm_backends), not fail: it keeps its campaign's place meanwhile.
    """
    _load_scorer(metric, campaign_pk)
    start = time.perf_counter()
    try:
        scored = _score_in_parts(self, metric, pair_pks, campaign_pk, start)
    except BackendUnavailable as error:
        llm_backends.retry_when_back(self, error)
    except HandedOver:  # its replacement scores the rest and queues the campaign's next batch
        record_event(
            "stepped aside",
            self.name,
            STEPPED_ASIDE.format(node=self.request.hostname),
            **self.facts([metric, pair_pks, campaign_pk]),
        )
        return 0
    dispatch.record_batch(campaign_pk, metric, scored, time.perf_counter() - start)
    if campaign_pk is not None:
        dispatch.finished(campaign_pk, metric, send=send_batch)
    return scored


class HandedOver(Exception):
    """This worker was found lost (paused past the limit) and its batch handed to another: it stops."""


def _score_in_parts(task, metric, pair_pks, campaign_pk, start):
    """`service.score_pairs` a part at a time, checking before each that the batch is still this worker's
    and, for a server, that it is within its soft time limit (a threads worker has no Celery limit to
    enforce it). A server's part is as many pairs as it serves at once: a resumed worker sends at most one."""
    served = served_by(metric, campaign_pk)
    part = served.max_concurrency if served is not None else len(pair_pks)
    limits = _served_limits(served, metric, pair_pks)  # the backend just read: not asked of the database again
    scored = 0
    for first in range(0, len(pair_pks), max(1, part)):
        if not still_held_here(task.request):
            raise HandedOver
        if limits is not None and time.perf_counter() - start > limits.soft:
            error = llm_backends.overran(limits)
            llm_backends.note_down(error, campaign=campaign_pk, metric=metric)
            raise error
        scored += service.score_pairs(metric, pair_pks[first : first + part])
    return scored


def _load_scorer(metric, campaign_pk):
    """Build the batch's scorer (its model loads once per process) before the clock starts.

    The time of a batch sizes the next ones (scoring.dispatch.batch_size, over the last 20): timed
    with a model's loading, a first batch of 4 pairs made the next ones far shorter than
    PARASOL_SCORING_BATCH_SECONDS, each paying a task's fixed costs for a pair or two.
    """
    campaign = Campaign.objects.filter(pk=campaign_pk).first() if campaign_pk is not None else None
    try:
        service.scorer_for(metric, campaign)
    except (MetricUnavailable, BackendUnavailable):
        pass  # score_pairs meets it and says why, as it always has


@shared_task(acks_late=True, ignore_result=False, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def sweep_metric(metric, campaign_id=None):
    """Start a scoring pass on every campaign missing this metric's current score; returns the signature in use
    (None for a per-campaign metric swept over several campaigns: each has its own)."""
    signatures = service.current_signatures(metric, campaign_id)
    for campaign, signature in signatures:
        for campaign_pk, first in dispatch.first_unscored(metric, signature, campaign).items():
            dispatch.start_pass(campaign_pk, metric, first, send=send_batch)
    return signatures[0][1] if len(signatures) == 1 else None


@shared_task
def sweep_all():
    """Periodic: every metric looks for unscored pairs on its own queue."""
    queue_sweep()


def send_batch(metric, campaign_pk, pair_pks):
    score_batch.apply_async(args=[metric, pair_pks, campaign_pk], retry=False)


def queue_scoring(pair_pks, metrics=None, campaign_pk=None):
    """Start (or extend) each campaign's scoring pass once the current transaction commits.

    A broker outage must not lose the pairs or fail the request that created
    them: the failure is logged and the periodic sweep scores them later.
    `campaign_pk`: the campaign of all of `pair_pks`, when the caller knows it.
    """
    metrics = metrics or service.enabled_metrics()

    def send():
        try:
            if score_batch.app.conf.task_always_eager:  # no queue to share: score them all, here
                for metric in metrics:
                    for batch in service.batches(pair_pks, service.batch_size(metric)):
                        score_batch.apply(args=[metric, batch])
                return
            starts = {campaign_pk: min(pair_pks)} if campaign_pk else dispatch.first_pk_by_campaign(pair_pks)
            for campaign, first in starts.items():
                for metric in metrics:
                    dispatch.start_pass(campaign, metric, first, send=send_batch)
        except Exception as error:  # the broker is down or unreachable
            logger.warning("Could not queue scoring (%s); the sweep will catch up.", error)

    transaction.on_commit(send)


def queue_sweep(campaign_id=None, metrics=None):
    """Ask each metric's worker to find and score whatever is missing; returns the AsyncResults."""
    return [
        sweep_metric.apply_async(args=[metric, campaign_id], retry=False)
        for metric in (metrics or service.enabled_metrics())
    ]
