"""End to end with the embedded model: 3 candidates for each of 10 sources, FS-Direct scores, the top one
selected, 20% of the others drawn, judges handed exactly those, and the report's selected-against-unselected
table."""

import pytest
from django.urls import reverse

from annotation import assignment as assign
from annotation.models import Assignment
from generation.models import GenerationRun, create_run
from generation.selection import select_candidates
from reports.analysis.ppi import SELECTED, UNSELECTED
from reports.cache import compute_report
from scoring.service import score_inline
from tests.factories import make_judge, remember, without_controls

pytestmark = pytest.mark.django_db

SOURCES = [
    "The cat sleeps on the sofa.",
    "It is raining today.",
    "She reads a good book.",
    "The train left early.",
    "We ate dinner at home.",
    "The shop opens at nine.",
    "He plays the guitar well.",
    "The sky is very blue.",
    "My brother likes football.",
    "The meeting was cancelled.",
]


def judge_through_the_pages(client, judge):
    """A judge answers every item the judging pages hand out (Django's test client); returns the real pairs."""
    remember(client, judge)
    handed = []
    for _ in range(200):
        client.get(reverse("annotation-show-item", args=[judge.campaign.slug, judge.token]))
        current = Assignment.objects.filter(judge=judge, judgment__isnull=True).select_related("pair").first()
        if current is None:
            break
        paraphrase = current.pair.is_training or current.pair.pk % 3 != 0  # both classes, blind to the selection
        response = client.post(
            reverse("annotation-record-answer", args=[judge.campaign.slug, judge.token]),
            {
                "assignment": current.pk,
                "label": "same_meaning" if paraphrase else "very_different",
                "response_ms": "1500",
            },
        )
        assert response.status_code in (200, 302)
        handed.append(current.pair)
    return [pair for pair in handed if not pair.is_training]


def test_k_candidates_selected_by_fs_direct_then_judged_and_reported(campaign, client):
    without_controls(campaign)
    campaign.pairs_per_judge = 100
    campaign.save()
    run = create_run(
        campaign, sources=SOURCES, templates=["naive"], decoding="sampling", candidates=3, max_new_tokens=24, seed=1
    )
    assert (run.selection, run.selection_metric, run.unselected_share) == ("top", "parapluie_fs_direct", 0.2)
    run.run_inline()
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.DONE and run.outputs.count() == 30
    candidates = list(campaign.real_pairs.values_list("pk", flat=True))
    assert candidates and not assign.open_pairs(campaign).exists()  # held back until selected
    assert "no parapluie_fs_direct scores yet" in select_candidates(run)
    score_inline(candidates, ["parapluie_fs_direct"])
    assert select_candidates(run) == ""
    outputs = list(run.outputs.filter(pair__isnull=False).select_related("pair"))
    groups = {output.source_id for output in outputs}
    assert sum(output.selected for output in outputs) == len(groups)  # one per source with a candidate
    for output in outputs:
        best = max(o.selection_score for o in outputs if o.source_id == output.source_id)
        assert output.selected == (output.rank == 1) and (output.rank == 1) == (output.selection_score == best)
    sent = {output.pair_id for output in outputs if output.pair.chosen}
    assert {output.pair_id for output in outputs if output.selected} <= sent
    judges = (make_judge(campaign), make_judge(campaign, level="native"))
    judged = [pair.pk for judge in judges for pair in judge_through_the_pages(client, judge)]
    assert set(judged) == sent and len(judged) == 2 * len(sent)  # exactly the drawn pairs, each by both judges
    report, _frames = compute_report([campaign], "human")
    table = report.tables["selection"].set_index("candidates")
    unselected = len(outputs) - len(groups)
    assert table.loc[SELECTED, "n_pairs"] == len(groups) and table.loc[SELECTED, "n_labelled"] == len(groups)
    assert table.loc[UNSELECTED, "n_pairs"] == unselected
    assert table.loc[UNSELECTED, "n_labelled"] == len(sent) - len(groups)
    if len(groups) >= 10:  # every source kept a candidate: enough judged ones for the selected group's interval
        row = table.loc[SELECTED]
        assert row["human_low"] <= row["human"] <= row["human_high"]
        assert row["ppi_low"] <= row["ppi"] <= row["ppi_high"]
