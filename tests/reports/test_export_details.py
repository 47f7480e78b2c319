"""The pairs export shows the evidence a metric kept per pair (an LLM oracle's raw answers) as JSON columns."""

import json

from campaigns.models import Score
from reports.exports import pairs_with_scores
from tests.factories import add_pairs

SIGNATURE = "metric:llm_vote|version:1|k:3"


def _vote(pair, answers, signature=SIGNATURE):
    details = {
        "replies": [f" {a.title()}." for a in answers],
        "answers": answers,
        "verdict": "yes",
        "consistency": 2 / 3,
    }
    value = answers.count("yes") / len(answers)
    return Score.objects.create(pair=pair, metric="llm_vote", signature=signature, value=value, details=details)


def test_it_adds_one_details_column_holding_the_stored_json(campaign):
    pairs = add_pairs(campaign, 2)
    stored = {pair.external_id: _vote(pair, ["yes", "no", "yes"]).details for pair in pairs}
    frame, signatures = pairs_with_scores(campaign)
    assert signatures["llm_vote"] == SIGNATURE
    exported = frame.set_index("pair_id")
    assert [column for column in frame if column.endswith("_details")] == ["llm_vote_details"]
    for pair_id, details in stored.items():
        assert json.loads(exported.loc[pair_id, "llm_vote_details"]) == details
        assert exported.loc[pair_id, "llm_vote"] == 2 / 3


def test_it_shows_only_the_details_of_the_signature_the_scores_use(campaign):
    (pair,) = add_pairs(campaign, 1)
    _vote(pair, ["no", "no", "no"], signature="metric:llm_vote|version:0|k:3")
    newest = _vote(pair, ["yes", "yes", "no"])
    frame, _ = pairs_with_scores(campaign)
    assert json.loads(frame.loc[0, "llm_vote_details"]) == newest.details


def test_metrics_without_details_add_no_column(campaign):
    pairs = add_pairs(campaign, 2)
    for pair in pairs:
        Score.objects.create(pair=pair, metric="lev", signature="metric:lev|version:1", value=3.0)
    frame, _ = pairs_with_scores(campaign)
    assert "lev" in frame
    assert not [column for column in frame if column.endswith("_details")]
