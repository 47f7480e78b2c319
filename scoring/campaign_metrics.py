"""The settings a per-campaign metric takes from one campaign: what its own researchers chose, nothing else.

A metric marked `per_campaign` in the registry (ParaTag's detector, trained on one campaign's
taggings) is built for each campaign from that campaign's choice, never from a deployment-wide
"latest": another researcher's retraining cannot change this campaign's scores. The options
land in the metric's signature, so scores of different choices are never mixed.
"""

from scoring.metrics.base import MetricUnavailable
from scoring.metrics.paratag import campaign_detectors_path
from scoring.metrics.registry import is_per_campaign


def campaign_options(metric, campaign) -> tuple:
    """The constructor options `campaign` gives `metric`, as sorted (name, value) pairs (a cache key); () if none."""
    if not is_per_campaign(metric):
        return ()
    if campaign is None:
        raise MetricUnavailable(f"{metric} scores each campaign with that campaign's own model: name the campaign")
    options = OPTIONS[metric](campaign)
    return tuple(sorted(options.items()))


def _paratag(campaign) -> dict:
    """Its own detectors' directory and latest version by default; the version it names otherwise."""
    detector_campaign, version = campaign.detector_choice()
    return {"detectors_dir": str(campaign_detectors_path(detector_campaign)), "detector": version}


OPTIONS = {"paratag": _paratag}
