"""The settings a per-campaign metric takes from one campaign: what its own researchers chose, nothing else.

A metric marked `per_campaign` in the registry (ParaTag's detector, trained on one campaign's
taggings) is built for each campaign from that campaign's choice, never from a deployment-wide
"latest": another researcher's retraining cannot change this campaign's scores. An LLM metric
(`llm_backend` in the registry) is built with the LLM backend the campaign names, by name from
PARASOL_LLM_BACKENDS. The options land in the metric's signature, so scores of different choices
are never mixed.
"""

from django.conf import settings

from metrics.backends import IN_PROCESS
from metrics.base import MetricUnavailable
from metrics.paratag import campaign_detectors_path
from metrics.registry import is_per_campaign, llm_backend_metrics, uses_llm_backend


def campaign_options(metric, campaign) -> tuple:
    """The constructor options `campaign` gives `metric`, as sorted (name, value) pairs (a cache key); () if none.

    An LLM metric without a campaign (a command scoring a file) uses the deployment's default backend.
    """
    if not is_per_campaign(metric):
        return ()
    if campaign is None and not uses_llm_backend(metric):
        raise MetricUnavailable(f"{metric} scores each campaign with that campaign's own model: name the campaign")
    options = OPTIONS[metric](campaign)
    return tuple(sorted(options.items()))


def llm_backend_options(metric, campaign=None, name=None) -> tuple:
    """(("backend", Backend),) for the backend named `name`, else `campaign`'s, else the default; () in-process.

    The in-process backend adds no option, so its scorer (and signature) is the one from before backends.
    """
    name = name or (campaign.llm_backend_name(metric) if campaign is not None else settings.PARASOL_LLM_BACKEND)
    backend = settings.PARASOL_LLM_BACKENDS.get(name)
    if backend is None:
        raise MetricUnavailable(
            f"{metric}: the LLM backend {name!r} is not declared in PARASOL_LLM_BACKENDS "
            f"(declared: {', '.join(settings.PARASOL_LLM_BACKENDS)})"
        )
    return () if name == IN_PROCESS else (("backend", backend),)


def _paratag(campaign) -> dict:
    """Its own detectors' directory and latest version by default; the version it names otherwise."""
    detector_campaign, version = campaign.detector_choice()
    return {"detectors_dir": str(campaign_detectors_path(detector_campaign)), "detector": version}


def _llm_backend(metric):
    return lambda campaign: dict(llm_backend_options(metric, campaign))


OPTIONS = {"paratag": _paratag, **{metric: _llm_backend(metric) for metric in llm_backend_metrics()}}
