"""The Celery router (`CELERY_TASK_ROUTES`): the queue of every Parasol task, decided here only.

Most tasks have a queue of their own (`parasol.queues`). A scoring task goes where its metric's model is
(`cpu` or `gpu`, the registry says), or to `served` when its campaign asks a server backend for that
LLM metric (`campaigns.llm_choice`): a served campaign never waits behind another's in-process batches.
"""

from campaigns.llm_choice import served_by
from metrics.registry import CPU, queue_of
from parasol.queues import GENERATION, REPORTS, SERVED, TRAINING

ROUTES = {
    "reports.tasks.compute_report_task": REPORTS,
    "reports.tasks.train_detector_task": TRAINING,
    "generation.tasks.generate_batch": GENERATION,
    "generation.tasks.select_candidates": GENERATION,
    "scoring.tasks.sweep_all": CPU,
}
# Tasks whose first argument is a metric: they run where the metric's model is. The value: the position
# of the campaign argument, whose backend may send the task to `served` instead.
BY_METRIC = {"scoring.tasks.score_batch": 2, "scoring.tasks.sweep_metric": 1}


def route(name, args, kwargs, options, task=None, **extra):
    """Celery router (CELERY_TASK_ROUTES): the queue of every Parasol task, decided here only."""
    if name in ROUTES:
        return {"queue": ROUTES[name]}
    if name in BY_METRIC:
        return {"queue": scoring_queue(name, list(args or ()), kwargs or {})}
    return None


def scoring_queue(name, args, kwargs):
    """`served` for a campaign's LLM metric asked of a server backend, else the metric's own queue (cpu, gpu).

    A sweep over every campaign (no campaign named) stays on the metric's queue: it builds each
    campaign's scorer, and an in-process one loads its model, which the served worker must never do.
    """
    metric = args[0] if args else kwargs["metric"]
    at = BY_METRIC[name]
    campaign_pk = args[at] if len(args) > at else kwargs.get("campaign_pk", kwargs.get("campaign_id"))
    if campaign_pk is not None and served_by(metric, campaign_pk) is not None:
        return SERVED
    return queue_of(metric)
