"""Which LLM backend a campaign's LLM metric is asked of: the campaign's own choice, else the deployment's default.

Read by the Celery router (`scoring.routing`: a batch for a server goes to the `served` queue), by
scoring's dispatch (a served batch is sized in waves of the server's concurrency) and by its tasks
(their time limits).
"""

from django.conf import settings

from metrics.registry import uses_llm_backend

from .models import Campaign


def backend_of(metric, campaign_pk=None):
    """The backend (`Backend`) that scores `metric` for the campaign (the deployment's default without one);
    None for a metric that asks no LLM backend. One query: routing a batch costs no more."""
    if not uses_llm_backend(metric):
        return None
    choices = Campaign.objects.filter(pk=campaign_pk).values_list("llm_backends", flat=True).first() or {}
    name = choices.get(metric) or settings.PARASOL_LLM_BACKEND
    return settings.PARASOL_LLM_BACKENDS.get(name)


def served_by(metric, campaign_pk=None):
    """The server backend that scores `metric` for the campaign, or None (in-process, or no LLM at all)."""
    backend = backend_of(metric, campaign_pk)
    return backend if backend is not None and backend.is_server else None
