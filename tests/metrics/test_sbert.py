import pytest
from sentence_transformers import SentenceTransformer, util

from metrics import HIGHER, get_metric
from metrics.loading import embedded_minilm_path

SOURCES = ["The cat sat on the mat.", "He can't take the joke.", "Flights from New York to Florida."]
HYPOTHESES = ["A cat was sitting on the mat.", "The stock market crashed.", "Flights from Florida to New York."]


@pytest.fixture(scope="module")
def sbert():
    return get_metric("sbert", device="cpu")


def test_it_is_the_cosine_of_the_sentence_embeddings(sbert):
    model = SentenceTransformer(str(embedded_minilm_path()), device="cpu")
    expected = [
        util.cos_sim(model.encode(s, convert_to_tensor=True), model.encode(h, convert_to_tensor=True)).item()
        for s, h in zip(SOURCES, HYPOTHESES)
    ]
    assert sbert.score(sources=SOURCES, hypotheses=HYPOTHESES) == pytest.approx(expected, abs=1e-5)


def test_it_gives_one_for_identical_sentences(sbert):
    assert sbert.score(sources=SOURCES, hypotheses=SOURCES) == pytest.approx([1.0] * 3, abs=1e-5)


def test_higher_means_closer(sbert):
    assert sbert.direction == HIGHER
    close, unrelated, _ = sbert.score(sources=SOURCES, hypotheses=HYPOTHESES)
    assert close > unrelated
