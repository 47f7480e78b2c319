import subprocess
import sys
from pathlib import Path

import pytest

from metrics import HIGHER, LOWER, Metric, format_signature, get_metric, get_metric_class, metric_names
from metrics.registry import (
    CPU,
    GPU,
    METRICS,
    default_metrics,
    direction_of,
    is_per_campaign,
    llm_backend_metrics,
    queue_of,
    title_of,
)
from tests.toys import EVERY_METRIC, TOY_METRIC, registered_toy_metric

REPO = Path(__file__).resolve().parents[2]

# The paper's metrics (ParaPLUIE and the metrics it is compared with), each with its direction: registered
# first, in this order, and scored by default.
PAPERS_METRICS = {
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
}
# Known facts about some registered metrics (a metric added later needs no line here).
RUN_A_LANGUAGE_MODEL = {
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
KNOWN_OPT_IN = {"pivot_f1", "pem", "llm_vote", "llm_checked", "paratag"}


@pytest.fixture(params=EVERY_METRIC)
def metric(request):
    """Each registered metric's name, and the toy's (registered for that test only)."""
    if request.param == TOY_METRIC:
        request.getfixturevalue("toy_metric")
    return request.param


def test_it_lists_the_papers_metrics_first_in_their_order_and_scores_them_by_default():
    assert metric_names()[: len(PAPERS_METRICS)] == list(PAPERS_METRICS)
    assert {name: direction_of(name) for name in PAPERS_METRICS} == PAPERS_METRICS
    assert set(PAPERS_METRICS) <= set(default_metrics())


def test_every_metric_declares_its_registered_name_and_direction(metric):
    cls = get_metric_class(metric)
    assert issubclass(cls, Metric)
    assert (cls.name, cls.direction) == (metric, METRICS[metric].direction)
    assert cls.direction in (HIGHER, LOWER)


def test_every_metric_has_a_title_and_a_queue(metric):
    entry = METRICS[metric]
    assert entry.title.strip() and title_of(metric) == entry.title
    assert queue_of(metric) in (CPU, GPU)


def test_every_metric_not_opt_in_is_scored_by_default_in_registry_order(metric):
    assert metric_names() == list(METRICS)
    assert (metric in default_metrics()) is not METRICS[metric].opt_in
    assert default_metrics() == [name for name in METRICS if not METRICS[name].opt_in]


def test_a_metric_built_per_campaign_says_so(metric):
    entry = METRICS[metric]
    assert is_per_campaign(metric) is (entry.per_campaign or entry.llm_backend)
    assert (metric in llm_backend_metrics()) is entry.llm_backend


def test_the_toy_metric_is_gone_once_its_registration_ends():
    with registered_toy_metric():
        assert TOY_METRIC in metric_names() and TOY_METRIC in default_metrics()
    assert TOY_METRIC not in METRICS and TOY_METRIC not in metric_names()
    with pytest.raises(KeyError, match="known metrics"):
        get_metric_class(TOY_METRIC)


def test_it_names_the_known_metrics_for_an_unknown_one():
    with pytest.raises(KeyError, match="known metrics: lev, bleu"):
        get_metric_class("rouge")


def test_it_builds_a_scorer_with_options():
    assert get_metric("lev").score(sources=["abc"], hypotheses=["abd"]) == [pytest.approx(1 / 3)]


def test_importing_the_package_loads_neither_torch_nor_django():
    code = "import sys, metrics; print(sorted({'torch', 'django'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_signatures_format_as_one_line():
    assert format_signature({"metric": "lev", "version": "1"}) == "metric:lev|version:1"


def test_the_metrics_that_run_a_language_model_go_to_the_gpu_queue():
    assert {name for name in RUN_A_LANGUAGE_MODEL if queue_of(name) == GPU} == RUN_A_LANGUAGE_MODEL


def test_the_slow_metrics_and_those_needing_a_fitted_model_are_opt_in():
    assert {name for name in KNOWN_OPT_IN if METRICS[name].opt_in} == KNOWN_OPT_IN
