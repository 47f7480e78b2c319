"""Scores stored under METEOR's version-1 signature (whitespace tokens) are rescored, never mixed with version 2."""

from datetime import timedelta

import pytest

from campaigns.models import Score
from metrics.base import format_signature, parse_signature
from metrics.wordnet import install_wordnet
from reports.frames import latest_metric_scores
from scoring import service
from tests.factories import add_pairs


@pytest.fixture
def meteor_scorer(tmp_path, monkeypatch):
    install_wordnet(tmp_path)
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    service.scorer.cache_clear()
    yield service.scorer("meteor")
    service.scorer.cache_clear()


def test_version_1_scores_are_rescored_and_left_out_of_the_table(campaign, meteor_scorer):
    pairs = add_pairs(campaign, 3)
    # What the former code stored: version 1, whitespace tokens.
    old = format_signature({**parse_signature(meteor_scorer.signature_string()), "version": "1", "tok": "whitespace"})
    earlier = Score.objects.bulk_create([Score(pair=pair, metric="meteor", signature=old, value=0.5) for pair in pairs])
    Score.objects.filter(pk__in=[s.pk for s in earlier]).update(created_at=earlier[0].created_at - timedelta(days=1))

    assert service.score_pairs("meteor", [pair.pk for pair in pairs]) == 3
    scores = latest_metric_scores([campaign])
    assert (
        scores.signatures == {"meteor": meteor_scorer.signature_string()} and "version:2" in scores.signatures["meteor"]
    )
    assert any("ignored" in note and "version:1" in note for note in scores.notes)
    expected = meteor_scorer.score(sources=[p.source for p in pairs], hypotheses=[p.hypothesis for p in pairs])
    assert scores.wide.loc[[p.pk for p in pairs], "meteor"].tolist() == pytest.approx(expected)
    assert Score.objects.filter(metric="meteor", signature=old).count() == 3  # kept, never mixed in
