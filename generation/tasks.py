"""Thin Celery tasks for generation runs, and the helpers that queue them (tasks import models, never the reverse)."""

import logging

from celery import shared_task
from django.db import OperationalError, transaction

from parasol.queues import WatchedTask

from .models import GenerationRun, create_run

logger = logging.getLogger(__name__)


class GenerationTask(WatchedTask):
    """A batch given up fails its run, with the reason, where the run's page shows it."""

    def facts(self, args):
        return {"run": args[0]}

    def given_up(self, args, reason):
        run = GenerationRun.objects.filter(pk=args[0]).first()
        if run is not None:
            run.fail(reason)


@shared_task(
    base=GenerationTask,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def generate_batch(run_id, source_pks):
    """Generate what these sources still lack; a cancelled, finished or deleted run is skipped."""
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None:
        return 0
    return run.generate_batch(source_pks)


def queue_run(run, *, strict=False):
    """One task per missing batch (queue `generation`) once the transaction commits.

    A broker outage is logged, or raised if strict.
    """

    def send():
        for batch in run.missing_source_batches():
            try:
                generate_batch.apply_async(args=[run.pk, batch], retry=False)
            except Exception as error:  # the broker is down or unreachable
                if strict:
                    raise
                logger.warning("Could not queue generation run %s (%s); resume it later.", run.pk, error)
                return
        run.finish_if_complete()  # nothing missing: a run of sources all already generated

    transaction.on_commit(send)


def start_run(campaign, **options):
    """Create a run (``models.create_run`` checks everything) and queue it once it is committed."""
    with transaction.atomic():
        run = create_run(campaign, **options)
        queue_run(run)
    return run


def resume_run(run, *, strict=False):
    """Queue again whatever is missing, e.g. after a broker outage, a failure or a cancellation."""
    run.reopen()
    queue_run(run, strict=strict)
