"""Metric names mapped to dotted paths and the facts about each; each metric is imported on first use.

Importing this module loads no metric: ``torch`` and the models are imported only
when a metric that needs them is asked for. A metric's direction, queue, natural threshold
and whether it is scored by default are written here only, so reports, workers and settings
know them without importing the metric, and the class reads its direction and threshold back.
"""

from dataclasses import dataclass
from importlib import import_module

HIGHER = "higher"  # a higher score means the hypothesis is closer to the source
LOWER = "lower"  # a lower score means closer (distances)

CPU = "cpu"  # the Celery queue of metrics that run no language model
GPU = "gpu"  # the Celery queue of metrics that run a language model (seconds per batch)

# ParaPLUIE's natural threshold (paper, 3.1): log p(yes) = log p(no), the model as sure of yes as of no.
LOG_ODDS_EVEN = 0.0


@dataclass(frozen=True)
class Entry:
    path: str  # module.Class, imported when the metric is first asked for
    direction: str  # HIGHER or LOWER
    title: str  # the metric's name as papers print it (reports, LaTeX, CSV header comments)
    queue: str = CPU  # CPU or GPU: the workers that score it
    # Scored only when named in PARASOL_METRICS: too slow to score every pair by default,
    # or in need of a fitted model or trained detector first.
    opt_in: bool = False
    # Built per campaign from that campaign's own choices (`scoring.campaign_metrics`): a model
    # trained on a campaign's data, where one deployment-wide model would let one campaign's
    # retraining change another's scores.
    per_campaign: bool = False
    # Asks a chat LLM through a backend (`metrics.backends`) that each campaign chooses,
    # so it is built per campaign too: one deployment serves researchers using different models.
    llm_backend: bool = False
    # The score the metric's own paper puts between paraphrase and non-paraphrase before seeing
    # any data (ParaPLUIE's "natural threshold"), or None where it gives none. Reports then add
    # this threshold's "a priori" rows beside the best one fitted on the labels, and Figure 2 draws it.
    natural_threshold: float | None = None
    # Through a server backend: the most requests one pair may take, one after another (ParaPLUIE: its answer,
    # then a wider and a biased look when the answer tokens are missing; INDIRECT an explanation first; the LLM
    # judges one per vote at the default k, and the checks). Bounds a batch's time (parasol.llm_backends).
    requests_per_pair: int = 1


METRICS = {
    "lev": Entry("metrics.lev.Levenshtein", LOWER, "Lev."),
    "bleu": Entry("metrics.bleu.Bleu", HIGHER, "BLEU"),
    "meteor": Entry("metrics.meteor.Meteor", HIGHER, "METEOR"),
    "wer": Entry("metrics.wer.WordErrorRate", LOWER, "WER"),
    "bertscore": Entry("metrics.bertscore.BertScore", HIGHER, "BERTScore"),
    "parascore": Entry("metrics.parascore.ParaScore", HIGHER, "ParaScore"),
    "sbert": Entry("metrics.sbert.SBert", HIGHER, "SBERT"),
    "parapluie_direct": Entry(
        "metrics.parapluie.ParaPluieDirect",
        HIGHER,
        "ParaPLUIE Direct",
        queue=GPU,
        llm_backend=True,
        natural_threshold=LOG_ODDS_EVEN,
        requests_per_pair=3,
    ),
    "parapluie_indirect": Entry(
        "metrics.parapluie.ParaPluieIndirect",
        HIGHER,
        "ParaPLUIE Indirect",
        queue=GPU,
        llm_backend=True,
        natural_threshold=LOG_ODDS_EVEN,
        requests_per_pair=4,
    ),
    "parapluie_fs_direct": Entry(
        "metrics.parapluie.ParaPluieFewShotDirect",
        HIGHER,
        "ParaPLUIE FS-Direct",
        queue=GPU,
        llm_backend=True,
        natural_threshold=LOG_ODDS_EVEN,
        requests_per_pair=3,
    ),
    "ngram_f1": Entry("metrics.ngram_f1.NgramF1", HIGHER, "n-gram F1"),
    "lm_fluency": Entry("metrics.lm_fluency.LmFluency", HIGHER, "LM fluency", queue=GPU),
    "pivot_f1": Entry("metrics.pivot_f1.PivotF1", HIGHER, "pivot F1", opt_in=True),
    "pem": Entry("metrics.pem.Pem", HIGHER, "PEM", queue=GPU, opt_in=True),
    "llm_vote": Entry(
        "metrics.llm_vote.LlmVote",
        HIGHER,
        "LLM vote",
        queue=GPU,
        opt_in=True,
        llm_backend=True,
        requests_per_pair=5,
    ),
    "llm_checked": Entry(
        "metrics.llm_checked.LlmChecked",
        HIGHER,
        "LLM vote, checked",
        queue=GPU,
        opt_in=True,
        llm_backend=True,
        requests_per_pair=10,
    ),
    "paratag": Entry("metrics.paratag.ParaTag", HIGHER, "ParaTag", queue=GPU, opt_in=True, per_campaign=True),
}


# The names in registry order, as a fixed sequence (the API schema's one enum of metrics reads it).
METRIC_NAMES = tuple(METRICS)


def metric_names():
    """The registered metrics' names, in registry order (read at each call: what is registered now)."""
    return list(METRICS)


def _entry(name) -> Entry:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(METRICS)}") from None


def direction_of(name) -> str:
    """HIGHER or LOWER for a registered metric, without importing it; ``KeyError`` names the known metrics."""
    return _entry(name).direction


def title_of(name) -> str:
    """The metric's printed name; a name the registry does not know (an old score) is shown as it is."""
    entry = METRICS.get(name)
    return entry.title if entry else str(name)


def natural_threshold_of(name) -> float | None:
    """The registered metric's natural threshold; None where it has none, or for a name the registry
    does not know (an old score): such a metric only gets thresholds fitted on the labels."""
    entry = METRICS.get(name)
    return entry.natural_threshold if entry else None


def queue_of(name) -> str:
    """CPU or GPU, the queue whose workers score a registered metric."""
    return _entry(name).queue


def is_per_campaign(name) -> bool:
    """Whether a registered metric is built per campaign, from that campaign's choices."""
    entry = _entry(name)
    return entry.per_campaign or entry.llm_backend


def uses_llm_backend(name) -> bool:
    """Whether a registered metric asks a chat LLM through the backend its campaign chooses."""
    return _entry(name).llm_backend


def requests_per_pair(name) -> int:
    """The most requests one pair of a registered metric may send to a server backend, one after another."""
    return _entry(name).requests_per_pair


def llm_backend_metrics():
    return [name for name, entry in METRICS.items() if entry.llm_backend]


def default_metrics():
    """The metrics scored when PARASOL_METRICS is not set: every one but the opt-in ones."""
    return [name for name, entry in METRICS.items() if not entry.opt_in]


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
