import subprocess
import sys
from pathlib import Path

import pytest

from scoring.metrics import HIGHER, LOWER, Metric, format_signature, get_metric, get_metric_class, metric_names
from scoring.metrics.registry import CPU, GPU, METRICS, default_metrics, queue_of

REPO = Path(__file__).resolve().parents[3]

EXPECTED = {
    "lev": LOWER,
    "bleu": HIGHER,
    "meteor": HIGHER,
    "wer": LOWER,
    "bertscore": HIGHER,
    "parascore": HIGHER,
    "sbert": HIGHER,
    "parapluie_direct": HIGHER,
    "parapluie_indirect": HIGHER,
    "parapluie_fs_direct": HIGHER,
    "ngram_f1": HIGHER,
    "lm_fluency": HIGHER,
    "pivot_f1": HIGHER,
    "pem": HIGHER,
    "llm_vote": HIGHER,
    "llm_checked": HIGHER,
    "paratag": HIGHER,
}

# The metrics that run a language model, scored by the `gpu` workers.
ON_GPU = {
    "parapluie_direct",
    "parapluie_indirect",
    "parapluie_fs_direct",
    "lm_fluency",
    "pem",
    "llm_vote",
    "llm_checked",
    "paratag",
}
# Scored only when named in PARASOL_METRICS: the LLM oracles are slow, the others need a fitted model.
OPT_IN = {"pivot_f1", "pem", "llm_vote", "llm_checked", "paratag"}


def test_it_lists_the_papers_metrics_then_pems():
    assert metric_names() == list(EXPECTED)


@pytest.mark.parametrize(("name", "direction"), EXPECTED.items())
def test_each_class_declares_its_name_and_direction(name, direction):
    cls = get_metric_class(name)
    assert issubclass(cls, Metric)
    assert (cls.name, cls.direction) == (name, direction)


def test_it_names_the_known_metrics_for_an_unknown_one():
    with pytest.raises(KeyError, match="known metrics: lev, bleu"):
        get_metric_class("rouge")


def test_it_builds_a_scorer_with_options():
    assert get_metric("lev").score(sources=["abc"], hypotheses=["abd"]) == [pytest.approx(1 / 3)]


def test_importing_the_package_loads_neither_torch_nor_django():
    code = "import sys, scoring.metrics; print(sorted({'torch', 'django'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_signatures_format_as_one_line():
    assert format_signature({"metric": "lev", "version": "1"}) == "metric:lev|version:1"


def test_the_metrics_that_run_a_language_model_go_to_the_gpu_queue():
    assert {name for name in METRICS if queue_of(name) == GPU} == ON_GPU
    assert {name for name in METRICS if queue_of(name) == CPU} == set(METRICS) - ON_GPU


def test_every_metric_is_scored_by_default_but_the_opt_in_ones_in_registry_order():
    assert {name for name, entry in METRICS.items() if entry.opt_in} == OPT_IN
    assert default_metrics() == [name for name in EXPECTED if name not in OPT_IN]
