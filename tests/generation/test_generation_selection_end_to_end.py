"""End to end with the embedded model: 3 candidates for each of 10 sources, FS-Direct scores, the top one
selected, 20% of the others drawn, judges handed exactly those, and the report's selected-against-unselected
table."""

import pytest

from annotation import assignment as assign
from generation.models import GenerationRun, create_run
from generation.selection import select_candidates
from reports.analysis.ppi import SELECTED, UNSELECTED
from reports.cache import compute_report
from scoring.service import score_inline
from tests.factories import make_judge, without_controls

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


def walk(judge):
    """Answer everything a judge is handed, through the functions the judging views call; returns the pairs."""
    handed = []
    while (current := assign.next_assignment(judge)) is not None:
        paraphrase = current.pair.is_training or current.pair.pk % 3 != 0  # both classes, blind to the selection
        assign.record_judgment(current, "same_meaning" if paraphrase else "very_different", 1500)
        handed.append(current.pair)
    return [pair for pair in handed if not pair.is_training]


def test_k_candidates_selected_by_fs_direct_then_judged_and_reported(campaign):
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
    judged = [pair.pk for judge in (make_judge(campaign), make_judge(campaign, level="native")) for pair in walk(judge)]
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
