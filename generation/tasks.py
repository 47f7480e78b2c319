"""Thin Celery tasks for generation runs, and the helpers that queue them (tasks import models, never the reverse)."""

import json
import logging
import time

import redis
from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction

from metrics.backends import BackendUnavailable
from parasol import llm_backends
from parasol.queues import WatchedTask, client, hand_out

from .llm import server_backend
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


def generation_time_limits(args):
    """`Limits` of a generate_batch(run_id, source_pks) whose run's model is served; None otherwise."""
    run_id, source_pks = args[:2]
    run = GenerationRun.objects.filter(pk=run_id).first()
    backend = server_backend(run.model) if run is not None else None
    if backend is None:
        return None
    return llm_backends.time_limits(backend, len(source_pks) * max(1, len(run.templates)) * run.candidates)


@shared_task(
    base=GenerationTask,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
    time_limits=staticmethod(generation_time_limits),
)
def generate_batch(self, run_id, source_pks):
    """Generate what these sources still lack; a cancelled, finished or deleted run is skipped.

    A server backend that does not answer makes the batch wait and retry (parasol.llm_backends),
    keeping the run's place among the runs meanwhile; the run's page says why it waits.
    """
    run = GenerationRun.objects.filter(pk=run_id).first()
    if run is None:
        return 0
    started = time.monotonic()
    try:
        stored = run.generate_batch(source_pks)
        record_speed(run.model, stored, time.monotonic() - started)
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
    """Queue the run's missing sources (queue `generation`) once the transaction commits, a few batches at a time.

    At most PARASOL_GENERATION_BATCHES_PER_RUN batches of a run wait or run at once; the
    rest of its sources wait in a Redis list and each batch that ends queues the next, so runs
    of several researchers take turns instead of the first one's thousand batches going first.
    Each batch is sized when it is queued, by time (`GenerationRun.sources_per_batch`).
    A broker outage is logged, or raised if strict.
    """

    def send():
        sources = run.missing_sources()
        try:
            if generate_batch.app.conf.task_always_eager:  # no queue to share: generate them all, here
                for batch in run.missing_source_batches():
                    generate_batch.apply(args=[run.pk, batch])
            else:
                hand_out(_pending_key(run.pk), [[pk] for pk in sources])
                for _ in range(settings.PARASOL_GENERATION_BATCHES_PER_RUN):
                    send_next_batch(run.pk)
        except Exception as error:  # the broker is down or unreachable
            if strict:
                raise
            logger.warning("Could not queue generation run %s (%s); resume it later.", run.pk, error)
            return
        if not sources:
            run.finish_if_complete()  # nothing missing: a run of sources all already generated

    transaction.on_commit(send)


def send_next_batch(run_pk):
    """Queue the run's next batch, sized by time, if sources are left; without a broker, resuming the run
    queues what is missing."""
    try:
        run = GenerationRun.objects.filter(pk=run_pk).first()
        if run is None:
            return
        size = run.sources_per_batch(model_speed(run.model))
        # One atomic pop of `size` items: two workers never take the same source.
        batch = [pk for raw in client().lpop(_pending_key(run_pk), size) or [] for pk in json.loads(raw)]
        if batch:
            generate_batch.apply_async(args=[run_pk, batch], retry=False)
    except Exception as error:  # the broker is down or unreachable
        logger.warning("Could not queue the next batch of generation run %s (%s); resume it later.", run_pk, error)


def batches_waiting(run_pk):
    """How many of the run's sources wait for their batch, not queued yet (each batch that ends queues the next)."""
    return client().llen(_pending_key(run_pk))


SPEEDS_KEPT = 20


def record_speed(model, outputs, seconds):
    """Remember how fast the model made a batch's outputs (the next batches' size); a Redis outage forgets it."""
    if not outputs or seconds <= 0:
        return
    try:
        key = _speed_key(model)
        with client().pipeline() as pipe:
            pipe.lpush(key, json.dumps([outputs, seconds])).ltrim(key, 0, SPEEDS_KEPT - 1).expire(key, 7 * 86400)
            pipe.execute()
    except redis.RedisError:
        pass


def model_speed(model):
    """Outputs per second one worker made with this model in its recent batches; None before any (or without Redis)."""
    try:
        rows = [json.loads(raw) for raw in client().lrange(_speed_key(model), 0, SPEEDS_KEPT - 1)]
    except redis.RedisError:
        return None
    seconds = sum(row[1] for row in rows)
    return sum(row[0] for row in rows) / seconds if rows and seconds > 0 else None


def _speed_key(model):
    return f"parasol:generation-speed:{model}"


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
