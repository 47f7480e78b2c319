"""Thin Celery tasks for generation runs and reports: take ids, call one function."""

from celery import shared_task
from django.db import OperationalError

from .generation import GenerationRun


@shared_task(
    queue="gpu",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def generate_batch(run_id, source_ids):
    """Generate what these sources still lack; a cancelled, finished or deleted run is skipped."""
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None:
        return 0
    return run.generate_batch(source_ids)


@shared_task(acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def compute_report_task(campaign_ids, label_source):
    """Compute a report into the cache; the report page polls until it is there."""
    from .reports import compute_report

    return compute_report(campaign_ids, label_source)
