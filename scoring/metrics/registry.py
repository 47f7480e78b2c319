"""Metric names mapped to dotted paths, imported on first use.

Importing this module loads no metric: ``torch`` and the models are imported only
when a metric that needs them is asked for.
"""

from importlib import import_module

METRICS = {
    "lev": "scoring.metrics.lev.Levenshtein",
    "bleu": "scoring.metrics.bleu.Bleu",
    "meteor": "scoring.metrics.meteor.Meteor",
    "bertscore": "scoring.metrics.bertscore.BertScore",
    "parascore": "scoring.metrics.parascore.ParaScore",
    "sbert": "scoring.metrics.sbert.SBert",
    "parapluie_direct": "scoring.metrics.parapluie.ParaPluieDirect",
    "parapluie_indirect": "scoring.metrics.parapluie.ParaPluieIndirect",
    "parapluie_fs_direct": "scoring.metrics.parapluie.ParaPluieFewShotDirect",
    "llm_vote": "scoring.metrics.llm_vote.LlmVote",
    "llm_checked": "scoring.metrics.llm_checked.LlmChecked",
}


def metric_names():
    return list(METRICS)


def get_metric_class(name):
    """The class registered under ``name``; ``KeyError`` names the known metrics."""
    try:
        dotted = METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(METRICS)}") from None
    module_name, _, class_name = dotted.rpartition(".")
    return getattr(import_module(module_name), class_name)


def get_metric(name, **options):
    """A scorer for ``name``; ``options`` are its constructor's settings.

    Models are cached per process by their settings (see ``loading``), so building
    several scorers with the same settings loads the weights once.
    """
    return get_metric_class(name)(**options)
