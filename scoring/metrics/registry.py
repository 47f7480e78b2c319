"""Metric names mapped to dotted paths and directions; each metric is imported on first use.

Importing this module loads no metric: ``torch`` and the models are imported only
when a metric that needs them is asked for. A metric's direction is written here
only, so reports know it without importing the metric, and the class reads it back.
"""

from dataclasses import dataclass
from importlib import import_module

HIGHER = "higher"  # a higher score means the hypothesis is closer to the source
LOWER = "lower"  # a lower score means closer (distances)


@dataclass(frozen=True)
class Entry:
    path: str  # module.Class, imported when the metric is first asked for
    direction: str  # HIGHER or LOWER


METRICS = {
    "lev": Entry("scoring.metrics.lev.Levenshtein", LOWER),
    "bleu": Entry("scoring.metrics.bleu.Bleu", HIGHER),
    "meteor": Entry("scoring.metrics.meteor.Meteor", HIGHER),
    "bertscore": Entry("scoring.metrics.bertscore.BertScore", HIGHER),
    "parascore": Entry("scoring.metrics.parascore.ParaScore", HIGHER),
    "sbert": Entry("scoring.metrics.sbert.SBert", HIGHER),
    "parapluie_direct": Entry("scoring.metrics.parapluie.ParaPluieDirect", HIGHER),
    "parapluie_indirect": Entry("scoring.metrics.parapluie.ParaPluieIndirect", HIGHER),
    "parapluie_fs_direct": Entry("scoring.metrics.parapluie.ParaPluieFewShotDirect", HIGHER),
}


def metric_names():
    return list(METRICS)


def _entry(name) -> Entry:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(METRICS)}") from None


def direction_of(name) -> str:
    """HIGHER or LOWER for a registered metric, without importing it; ``KeyError`` names the known metrics."""
    return _entry(name).direction


def get_metric_class(name):
    """The class registered under ``name``; ``KeyError`` names the known metrics."""
    module_name, _, class_name = _entry(name).path.rpartition(".")
    return getattr(import_module(module_name), class_name)


def get_metric(name, **options):
    """A scorer for ``name``; ``options`` are its constructor's settings.

    Models are cached per process by their settings (see ``loading``), so building
    several scorers with the same settings loads the weights once.
    """
    return get_metric_class(name)(**options)
