"""BERTSCORE_MODEL and BERTSCORE_NUM_LAYERS are Django settings handed to BERTScore and ParaScore alike."""

import pytest

from metrics import MetricUnavailable
from scoring import service


@pytest.fixture
def fresh_scorers():
    service.scorer.cache_clear()
    yield
    service.scorer.cache_clear()


@pytest.mark.parametrize("metric", ["bertscore", "parascore"])
def test_both_metrics_take_the_model_from_the_settings(settings, fresh_scorers, metric):
    options = {"model": "/no/such/bert-base-uncased", "num_layers": 9}
    settings.METRIC_OPTIONS = {"bertscore": options, "parascore": options}
    with pytest.raises(MetricUnavailable, match="BERTSCORE_MODEL"):
        service.scorer(metric)


def test_the_default_is_the_packaged_minilm_at_its_last_layer(settings, fresh_scorers):
    assert settings.METRIC_OPTIONS["parascore"] == settings.METRIC_OPTIONS["bertscore"]
    signature = service.scorer("parascore").signature()
    assert signature["model"].startswith("all-MiniLM-L6-v2") and signature["layer"] == "6"
