"""Thin Celery tasks (take ids, call one service function) and the helpers that queue them.

Tasks import the service, never the reverse: queueing lives here, beside the tasks it queues.
"""

import logging

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction

from scoring.metrics.backends import BackendUnavailable

from . import service

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def score_batch(self, metric, pair_pks):
    """Score one batch of pairs; pairs already scored or deleted are skipped.

    An LLM server that does not answer makes the batch wait (retried with backoff, up to
    PARASOL_LLM_BACKEND_WAIT_RETRIES times, 5 minutes apart at most), not fail.
    """
    try:
        return service.score_pairs(metric, pair_pks)
    except BackendUnavailable as error:
        countdown = min(300, 10 * 2**self.request.retries)
        raise self.retry(
            exc=error, countdown=countdown, max_retries=settings.PARASOL_LLM_BACKEND_WAIT_RETRIES
        ) from error


@shared_task(acks_late=True, ignore_result=False, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def sweep_metric(metric, campaign_id=None):
    """Queue batches for every pair missing this metric's current score; returns the signature in use."""
    signature, missing = service.missing_pair_pks(metric, campaign_id)
    if missing:
        queue_scoring(missing, metrics=[metric])
    return signature


@shared_task
def sweep_all():
    """Periodic: every metric looks for unscored pairs on its own queue."""
    queue_sweep()


def queue_scoring(pair_pks, metrics=None):
    """Queue one task per batch per metric once the current transaction commits.

    A broker outage must not lose the pairs or fail the request that created
    them: the failure is logged and the periodic sweep scores them later.
    """
    metrics = metrics or service.enabled_metrics()

    def send():
        for metric in metrics:
            for batch in service.batches(pair_pks, service.batch_size(metric)):
                try:
                    score_batch.apply_async(args=[metric, batch], queue=service.queue_of(metric), retry=False)
                except Exception as error:  # the broker is down or unreachable
                    logger.warning("Could not queue %s scoring (%s); the sweep will catch up.", metric, error)
                    return

    transaction.on_commit(send)


def queue_sweep(campaign_id=None, metrics=None):
    """Ask each metric's worker to find and score whatever is missing; returns the AsyncResults."""
    return [
        sweep_metric.apply_async(args=[metric, campaign_id], queue=service.queue_of(metric), retry=False)
        for metric in (metrics or service.enabled_metrics())
    ]
