"""Every task type's answers become human labels as its `vote` declares: Table 2, Table 3 and the estimates.

The report fixture's judges answer each pair as its gold label says (the toy with its yes/no answer,
`example_answer(paraphrase=...)`), so a type that declares a vote gets labels equal to the gold ones; a
type that declares none gets none and says so. Adaptive overlap reads the same declaration.
"""

import pandas as pd
import pytest

from annotation import assignment as assign
from annotation.votes import VOTE_COLUMNS
from campaigns.task_types import get_task_type
from reports.analysis.labels import judge_votes
from reports.cache import compute_report
from reports.frames import load_frames
from tests.factories import make_judge
from tests.report_fixtures import report_campaign
from tests.toys import every_task_type

pytestmark = pytest.mark.django_db

SMALL = {"n_bootstrap": 20, "n_draws": 3, "curve_points": 21}


@pytest.mark.report
@every_task_type
def test_every_task_types_votes_become_the_human_labels_of_table3_and_the_estimates(researcher, task_type):
    campaign = report_campaign(researcher, task_type)
    vote = get_task_type(task_type).vote
    report, frames = compute_report([campaign], "human", **SMALL)
    gold = frames.pairs.set_index("pair_id")["gold_label"]
    votes = judge_votes(frames.judgments)
    if vote is None:
        assert votes.empty and frames.judgments["vote"].isna().all()
        assert "No pair has a human label yet: no statistic can be computed." in report.notes
        assert report.tables["table3"].empty
        return
    # Two judges per pair, each voting as the gold label: every pair labelled, and labelled as its gold label.
    assert len(votes) == 2 * len(gold) and set(votes.columns) == {"pair_id", "judge", "vote", "ordinal"}
    assert (votes["vote"].to_numpy() == gold.reindex(votes["pair_id"]).to_numpy()).all()
    assert report.summary["n_labelled"] == len(gold)
    table2 = report.tables["table2"].set_index("corpus")
    assert table2.loc["Global", "n_unlabelled"] == 0
    assert table2.loc["Global", "n_paraphrase"] == int(gold.sum())
    table3 = report.tables["table3"]
    assert not table3.empty and set(report.metrics) <= set(table3["metric"])
    estimates = report.tables["estimates"]
    assert not estimates.empty
    assert estimates["n_labelled"].max() == len(gold), estimates


def test_the_judgments_frame_carries_the_vote_columns_as_the_type_declares_them(researcher):
    campaign = report_campaign(researcher, "similarity")
    judgments = load_frames([campaign]).judgments
    assert set(VOTE_COLUMNS) <= set(judgments.columns)
    five_way = {"same_meaning": 1.0, "mostly_similar": 1.0, "slightly_similar": 0.0, "very_different": 0.0}
    expected = judgments["answer"].map(five_way)
    assert judgments["vote"].equals(expected.astype(float).rename("vote"))


@every_task_type
def test_adaptive_overlap_reads_the_types_vote(researcher, task_type):
    campaign = report_campaign(researcher, task_type)
    campaign.adaptive_overlap, campaign.overlap_target, campaign.overlap_max = True, 2, 3
    campaign.save()
    checker = get_task_type(task_type)
    pairs = list(campaign.real_pairs.order_by("pk"))
    if checker.vote is None:
        # No vote, no dispute: every pair has its two judgments and none reopens.
        assert not assign.open_pairs(campaign).filter(pk__in=[p.pk for p in pairs]).exists()
        return
    # The fixture's two judges agree on every pair: all settled. A third judgment is not wanted...
    assert assign.settled_early(campaign).count() == len(pairs)
    # ...until two judges disagree: a fresh pair answered yes then no stays open for a third judge.
    fresh = campaign.pairs.create(external_id="fresh", source="A cat sat.", hypothesis="A cat was sitting.")
    for position, side in enumerate((1, 0), start=len(pairs) + 1):
        form = checker.answer_form({"assignment": "1", **checker.example_answer(side)})
        assert form.is_valid(), form.errors
        judge = make_judge(campaign)
        assignment = judge.assignments.create(pair=fresh, position=position, top="source")
        assign.record_judgment(assignment, checker.answer(form.cleaned_data))
    assert assign.open_pairs(campaign).filter(pk=fresh.pk).exists()
    assert not assign.settled_early(campaign).filter(pk=fresh.pk).exists()


def test_judge_votes_leave_out_the_answers_without_a_vote():
    judgments = pd.DataFrame(
        {
            "pair_id": ["a", "a", "b"],
            "judge": ["j1", "j2", "j1"],
            "vote": [1.0, float("nan"), 0.0],
            "abstained": [False, True, False],
            "rating": [4.0, float("nan"), 1.0],
        }
    )
    votes = judge_votes(judgments)
    assert votes.to_dict("records") == [
        {"pair_id": "a", "judge": "j1", "vote": 1, "ordinal": 4.0},
        {"pair_id": "b", "judge": "j1", "vote": 0, "ordinal": 1.0},
    ]
