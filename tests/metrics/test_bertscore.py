import bert_score
import pytest

from metrics import HIGHER, MetricUnavailable, get_metric
from metrics.loading import embedded_minilm_path

SOURCES = ["The cat sat on the mat.", "He can't take the joke.", "Flights from New York to Florida."]
HYPOTHESES = ["A cat was sitting on the mat.", "He can't take the joker.", "Flights from Florida to New York."]


@pytest.fixture(scope="module")
def bertscore():
    return get_metric("bertscore", device="cpu")


def test_it_equals_bert_score_called_directly(bertscore):
    _, _, f1 = bert_score.score(
        HYPOTHESES,
        SOURCES,
        model_type=str(embedded_minilm_path()),
        num_layers=6,
        idf=False,
        rescale_with_baseline=False,
        device="cpu",
    )
    assert bertscore.score(sources=SOURCES, hypotheses=HYPOTHESES) == pytest.approx(f1.tolist(), abs=1e-6)


def test_it_gives_one_for_identical_sentences(bertscore):
    assert bertscore.score(sources=SOURCES, hypotheses=SOURCES) == pytest.approx([1.0] * 3, abs=1e-5)


def test_it_does_not_depend_on_batching(bertscore):
    together = bertscore.score(sources=SOURCES, hypotheses=HYPOTHESES)
    alone = [bertscore.score(sources=[s], hypotheses=[h])[0] for s, h in zip(SOURCES, HYPOTHESES)]
    assert together == pytest.approx(alone, abs=1e-5)


def test_its_signature_states_model_and_layer(bertscore):
    assert bertscore.direction == HIGHER
    signature = bertscore.signature()
    assert (signature["layer"], signature["idf"], signature["rescale"]) == ("6", "no", "no")
    assert "MiniLM" in signature["model"]


def test_it_names_the_setting_when_the_model_is_missing(monkeypatch):
    monkeypatch.setenv("BERTSCORE_MODEL", "no-such-owner/no-such-model")
    with pytest.raises(MetricUnavailable, match="BERTSCORE_MODEL"):
        get_metric("bertscore", device="cpu")
