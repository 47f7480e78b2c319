"""The report's selected-against-unselected table: a generation run's selection, judges on the selected
candidates and a random share of the others, intervals for both groups; and the pure analysis behind it."""

import numpy as np
import pandas as pd
import pytest

from annotation.assignment import open_pairs
from campaigns.models import Pair
from generation import llm
from generation.selection import select_candidates
from reports.analysis.ppi import SELECTED, SELECTION_DIFFERENCE, UNSELECTED, selection_table
from reports.analysis.present import shown
from reports.cache import compute_report
from scoring.service import score_inline
from tests.factories import judge_by_gold, without_controls
from tests.generation.test_generation_selection import Varied, generated


def test_the_analysis_gives_both_groups_an_interval_and_their_difference():
    rng = np.random.default_rng(3)
    n = 400
    selected = np.arange(n) % 4 == 0
    truth = np.where(selected, rng.random(n) < 0.8, rng.random(n) < 0.3).astype(float)
    judged = selected | (rng.random(n) < 0.2)
    frame = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "paraphrase": np.where(judged, truth, np.nan),
            "generator": "embedded",
            "template": "naive",
            "selected": pd.array(selected, dtype="boolean"),
            "bleu": truth + rng.normal(0, 0.5, n),
        }
    )
    table, notes = selection_table(frame, ["bleu"], {"bleu": "higher"})
    assert list(table["candidates"]) == [SELECTED, UNSELECTED, SELECTION_DIFFERENCE] and not notes
    for row in table.itertuples():
        assert row.ppi_low < row.ppi < row.ppi_high and row.human_low < row.human < row.human_high
    by_kind = table.set_index("candidates")
    assert by_kind.loc[SELECTED, "n_labelled"] == selected.sum() and by_kind.loc[SELECTED, "n_pairs"] == 100
    assert by_kind.loc[SELECTED, "ppi_low"] < truth[selected].mean() < by_kind.loc[SELECTED, "ppi_high"]
    assert by_kind.loc[UNSELECTED, "ppi_low"] < truth[~selected].mean() < by_kind.loc[UNSELECTED, "ppi_high"]
    assert by_kind.loc[SELECTION_DIFFERENCE, "ppi_low"] > 0  # the filter helped, and the interval says so


def test_the_analysis_says_why_there_is_no_table_yet():
    frame = pd.DataFrame({"pair_id": ["a"], "paraphrase": [np.nan], "selected": pd.array([True], dtype="boolean")})
    table, notes = selection_table(frame, [], {})
    assert table.empty and "no candidate judged yet" in notes[0]
    assert selection_table(frame.drop(columns="selected"), [], {})[0].empty


def wilson(count, n, z=1.959963984540054):
    """Wilson's score interval, by its formula (Wilson 1927)."""
    p = count / n
    centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_a_group_too_small_for_the_normal_interval_gets_wilsons_and_the_difference_newcombes():
    rng = np.random.default_rng(5)
    n = 60
    selected = np.arange(n) < 30
    label = np.full(n, np.nan)
    label[selected] = rng.random(30) < 0.8  # every selected candidate judged
    label[30:34] = [1, 0, 0, 0]  # four unselected judged: too few for a normal interval
    frame = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "paraphrase": label,
            "selected": pd.array(selected, dtype="boolean"),
            "bleu": rng.random(n),
        }
    )
    table, notes = selection_table(frame, ["bleu"], {"bleu": "higher"})
    rows = table.set_index("candidates")
    assert rows.loc[UNSELECTED, "interval"] == "Wilson" and rows.loc[UNSELECTED, "human"] == 0.25
    assert (rows.loc[UNSELECTED, "human_low"], rows.loc[UNSELECTED, "human_high"]) == pytest.approx(wilson(1, 4))
    assert rows.loc[UNSELECTED, "ppi"] != rows.loc[UNSELECTED, "ppi"]  # no prediction-powered one
    assert rows.loc[SELECTED, "interval"] == "normal"
    assert rows.loc[SELECTED, "human_low"] < rows.loc[SELECTED, "human"] < rows.loc[SELECTED, "human_high"]
    # Newcombe's hybrid score interval (1998, method 10): the two Wilson intervals' distances, in quadrature.
    count, p1 = int(label[selected].sum()), label[selected].mean()
    (l1, u1), (l2, u2) = wilson(count, 30), wilson(1, 4)
    low = p1 - 0.25 - np.hypot(p1 - l1, u2 - 0.25)
    high = p1 - 0.25 + np.hypot(u1 - p1, 0.25 - l2)
    difference = rows.loc[SELECTION_DIFFERENCE]
    assert difference["interval"] == "Newcombe"
    assert (difference["human_low"], difference["human_high"]) == pytest.approx((low, high))
    assert any("Wilson" in note and "Newcombe" in note for note in notes)


def test_under_active_choice_each_group_weights_its_judged_pairs_by_their_probability():
    rng = np.random.default_rng(8)
    n = 200
    selected = np.arange(n) < 80
    probability = np.where(selected, 1.0, 0.5) * rng.uniform(0.3, 0.9, n)  # the selection's chance x active's
    chosen = rng.random(n) < probability
    truth = (rng.random(n) < np.where(selected, 0.7, 0.4)).astype(float)
    frame = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "paraphrase": np.where(chosen, truth, np.nan),
            "selected": pd.array(selected, dtype="boolean"),
            "choice_probability": probability,
            "chosen": pd.array(chosen, dtype="boolean"),
            "bleu": truth + rng.normal(0, 1, n),
        }
    )
    rows = selection_table(frame, ["bleu"], {"bleu": "higher"})[0].set_index("candidates")
    for kind, members in ((SELECTED, selected), (UNSELECTED, ~selected)):
        weights = np.where(chosen & members, 1 / probability, 0)
        weighted = np.sum(weights * truth) / weights.sum()  # Hájek
        assert rows.loc[kind, "human"] == pytest.approx(weighted) and rows.loc[kind, "interval"] == "normal, weighted"
        assert rows.loc[kind, "ppi_low"] < rows.loc[kind, "ppi"] < rows.loc[kind, "ppi_high"]


@pytest.mark.django_db
def test_the_report_compares_selected_and_unselected_candidates(campaign, monkeypatch):
    monkeypatch.setattr(llm, "get_generator", lambda model: Varied())
    without_controls(campaign)
    run = generated(campaign, selection_metric="lev", unselected_share=0.5)
    pks = list(campaign.real_pairs.values_list("pk", flat=True))
    score_inline(pks, ["lev", "bleu"])
    assert select_candidates(run) == ""
    sent = list(open_pairs(campaign).order_by("pk"))
    rng = np.random.default_rng(0)
    for pair in sent:  # the judges' verdicts, as their answers give them
        pair.gold_label = int(rng.random() < (0.8 if pair.metadata["selected"] else 0.3))
    Pair.objects.bulk_update(sent, ["gold_label"])
    judge_by_gold(campaign, sent)
    report, _frames = compute_report([campaign], "human")
    table = report.tables["selection"]
    kinds = list(table["candidates"])
    assert kinds[:2] == [SELECTED, UNSELECTED], table
    selected = table.iloc[0]
    assert (selected["n_pairs"], selected["n_labelled"]) == (10, 10)
    assert table.iloc[1]["n_pairs"] == 20 and table.iloc[1]["n_labelled"] == len(sent) - 10
    assert selected["human_low"] <= selected["human"] <= selected["human_high"]
    page = shown(report, "selection")
    assert page is not None and "Judges only [95% CI]" in page.table.columns
