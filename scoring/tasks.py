"""Thin Celery tasks: take ids, call one service function."""

from celery import shared_task
from django.db import OperationalError

from . import service


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def score_batch(metric, pair_ids):
    """Score one batch of pairs; pairs already scored or deleted are skipped."""
    return service.score_pairs(metric, pair_ids)


@shared_task(acks_late=True, ignore_result=False, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5)
def sweep_metric(metric, campaign_id=None):
    """Queue whatever this metric has not scored yet; returns the signature in use."""
    return service.sweep(metric, campaign_id)


@shared_task
def sweep_all():
    """Periodic: every metric looks for unscored pairs on its own queue."""
    service.queue_sweep()
