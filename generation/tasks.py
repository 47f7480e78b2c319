"""Thin Celery tasks for generation runs, and the helpers that queue them (tasks import models, never the reverse)."""

import logging

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction

from parasol import llm_backends
from parasol.queues import WatchedTask, client, hand_out, take_next
from scoring.metrics.backends import BackendUnavailable

from .models import GenerationRun, create_run
from .selection import select_candidates as select_run_candidates

logger = logging.getLogger(__name__)


class GenerationTask(WatchedTask):
    """A batch given up fails its run, with the reason, where the run's page shows it."""

    def facts(self, args):
        return {"run": args[0]}

    def given_up(self, args, reason):
        run = GenerationRun.objects.filter(pk=args[0]).first()
        if run is not None:
            run.fail(reason)
        hand_out(_pending_key(args[0]), [])  # a failed run queues nothing more; resuming it starts again


@shared_task(
    base=GenerationTask,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
    time_limits=staticmethod(llm_backends.generation_time_limits),
)
def generate_batch(self, run_id, source_pks):
    """Generate what these sources still lack; a cancelled, finished or deleted run is skipped.

    A server backend that does not answer makes the batch wait and retry (parasol.llm_backends),
    keeping the run's place among the runs meanwhile; the run's page says why it waits.
    """
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None:
        return 0
    try:
        stored = run.generate_batch(source_pks)
    except BackendUnavailable as error:
        if self.request.is_eager:
            run.reopen()  # no worker would retry it: the run waits, queued, for a resume
            return 0
        llm_backends.retry_when_back(self, error)
    send_next_batch(run_id)
    run.refresh_from_db()
    if run.selects and run.status == GenerationRun.Status.DONE:
        queue_selection(run)
    return stored


class ScoresPending(Exception):
    """The selection metric's scores are not all in yet: the selection task tries again later."""


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, ScoresPending),
    retry_backoff=30,
    retry_backoff_max=600,
    max_retries=50,
)
def select_candidates(run_id):
    """Select the run's candidates once they are scored (idempotent: see generation.selection)."""
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None:
        return ""
    reason = select_run_candidates(run)
    if reason and not run.is_active:
        raise ScoresPending(reason)  # the scoring workers are on it; the run's page shows the reason
    return reason


def queue_selection(run):
    """Queue the selection once the transaction commits; a broker outage leaves it to the run's page or command."""

    def send():
        try:
            select_candidates.apply_async(args=[run.pk], retry=False)
        except Exception as error:  # the broker is down or unreachable
            logger.warning("Could not queue the selection of generation run %s (%s).", run.pk, error)

    transaction.on_commit(send)


def queue_run(run, *, strict=False):
    """Queue the run's missing batches (queue `generation`) once the transaction commits, a few at a time.

    At most PARASOL_GENERATION_BATCHES_PER_RUN batches of a run wait or run at once; the
    rest wait in a Redis list and each batch that ends queues the next, so runs of several
    researchers take turns instead of the first one's thousand batches going first.
    A broker outage is logged, or raised if strict.
    """

    def send():
        batches = run.missing_source_batches()
        try:
            if generate_batch.app.conf.task_always_eager:  # no queue to share: generate them all, here
                for batch in batches:
                    generate_batch.apply(args=[run.pk, batch])
            else:
                hand_out(_pending_key(run.pk), batches)
                for _ in range(settings.PARASOL_GENERATION_BATCHES_PER_RUN):
                    send_next_batch(run.pk)
        except Exception as error:  # the broker is down or unreachable
            if strict:
                raise
            logger.warning("Could not queue generation run %s (%s); resume it later.", run.pk, error)
            return
        if not batches:
            run.finish_if_complete()  # nothing missing: a run of sources all already generated

    transaction.on_commit(send)


def send_next_batch(run_pk):
    """Queue the run's next batch, if one is left; without a broker, resuming the run queues what is missing."""
    try:
        batch = take_next(_pending_key(run_pk))
        if batch is not None:
            generate_batch.apply_async(args=[run_pk, batch], retry=False)
    except Exception as error:  # the broker is down or unreachable
        logger.warning("Could not queue the next batch of generation run %s (%s); resume it later.", run_pk, error)


def batches_waiting(run_pk):
    """How many of the run's batches wait for their turn, not queued yet (each batch that ends queues the next)."""
    return client().llen(_pending_key(run_pk))


def _pending_key(run_pk):
    return f"parasol:generation-pending:{run_pk}"


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
