"""Thin Celery task computing a large report, and the helper that queues it (tasks import services only)."""

from celery import shared_task
from django.db import OperationalError
from django.utils import timezone

from campaigns.models import Campaign
from parasol.queues import WatchedTask
from scoring import service
from scoring import tasks as scoring_tasks

from . import cache
from .detector import claim_training, release_training, set_training_status, train_in_worker


class ReportTask(WatchedTask):
    """A report given up says so on its page (for a minute), then the next visit queues it again."""

    def facts(self, args):
        return {"campaigns": list(args[0])}

    def given_up(self, args, reason):
        cache.fail_computation(args[0], args[1], reason)


class TrainingTask(WatchedTask):
    def facts(self, args):
        return {"campaign": args[0]}

    def given_up(self, args, reason):
        set_training_status(args[0], stage="failed", running=False, error=reason)
        release_training(args[0])


@shared_task(base=ReportTask, acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=3)
def compute_report_task(campaign_ids, label_source):
    """Compute a report into the cache; the report page polls until it is there."""
    return cache.compute_and_cache(campaign_ids, label_source)


def report_or_status(campaigns, label_source):
    """(report, None) when ready; (None, status) while a worker computes it.

    Small reports (`cache.fits_in_request`: pairs, systems, comparisons, groups) are computed
    in the request; larger ones are handed to a worker once (the status entry is the lock)
    and the page polls until the report is in the cache. A broker that cannot be reached
    means the request computes it after all.
    """
    state = cache.data_state(campaigns, cache.report_store())  # read once: the key and, if computed here, the report
    key = cache.report_key(campaigns, label_source, state)
    cached = cache.cached_report(key)
    if cached is not None:
        return cached, None
    status = cache.computation_status(key)
    if status is not None:  # a worker is on it: the page polls, and the work is not measured again each time
        return None, status
    if cache.fits_in_request(campaigns):
        return cache.get_report(campaigns, label_source, state=state), None
    claimed = cache.claim_computation(key)
    if claimed is not None:
        try:
            compute_report_task.apply_async(args=[[c.pk for c in campaigns], label_source], retry=False)
        except Exception:  # the broker is down: compute here rather than wait for nobody
            cache.release_computation(key)
            return cache.get_report(campaigns, label_source, state=state), None
    # No status: the worker finished (or gave up) between two reads; the next poll finds out which.
    return None, cache.computation_status(key) or claimed or {"stage": "finishing", "started": timezone.now()}


# Acknowledged late like every task: a worker that dies mid-training has it retried once,
# then the panel says it failed and why (acknowledged early, it stayed "running" for ever).
@shared_task(base=TrainingTask, acks_late=True, ignore_result=True)
def train_detector_task(campaign_id, options):
    """Train a span detector on the campaign's taggings (stage read by its page), then score its pairs with it."""
    campaign = Campaign.objects.live().filter(pk=campaign_id).first()
    if campaign is None:
        release_training(campaign_id)
        return None
    version = train_in_worker(campaign, **options)
    if version and "paratag" in service.enabled_metrics():
        scoring_tasks.queue_sweep(campaign_id, metrics=["paratag"])
    return version


def queue_detector_training(campaign):
    """Queue a retraining unless one is already under way; False when it is (or the broker is down)."""
    if not claim_training(campaign.pk):
        return False
    try:
        train_detector_task.apply_async(args=[campaign.pk, {}], retry=False)
    except Exception as error:  # the broker is down: say so on the page, free the lock
        set_training_status(campaign.pk, stage="failed", running=False, error=f"no worker reachable: {error}")
        release_training(campaign.pk)
        return False
    return True
