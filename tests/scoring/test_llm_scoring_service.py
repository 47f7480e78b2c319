"""An LLM oracle metric through the scoring service: details stored once, scoring idempotent."""

import pytest

from campaigns.models import Score
from scoring import service
from tests.factories import add_pairs


@pytest.fixture
def small_vote(monkeypatch):
    """llm_vote with k=2 on the CPU for this test's process-wide scorer."""
    for name, value in {"LLM_VOTE_K": "2", "LLM_DEVICE": "cpu", "LLM_DTYPE": "float32"}.items():
        monkeypatch.setenv(name, value)
    service.scorer.cache_clear()
    yield
    service.scorer.cache_clear()


def test_it_stores_the_answers_once_even_when_run_twice(campaign, small_vote):
    pairs = add_pairs(campaign, 2)
    ids = [pair.pk for pair in pairs]
    assert service.score_pairs("llm_vote", ids) == 2
    assert service.score_pairs("llm_vote", ids) == 0
    scores = Score.objects.filter(metric="llm_vote")
    assert scores.count() == 2
    for score in scores:
        assert len(score.details["answers"]) == 2
        assert score.value == score.details["answers"].count("yes") / 2
    assert "k:2" in scores[0].signature


def test_metrics_without_details_store_none(campaign):
    pairs = add_pairs(campaign, 2)
    service.score_pairs("lev", [pair.pk for pair in pairs])
    assert list(Score.objects.values_list("details", flat=True)) == [None, None]
