import re

import numpy as np
import pandas as pd
import pytest

from annotation.tasktypes.similarity.scale import VOTE
from annotation.votes import with_votes
from reports.analysis import TABLE_NAMES, build_report, curves_figure, figure2
from reports.analysis.breakdowns import by_english_level, by_group

DIRECTIONS = {"lev": "lower", "bleu": "higher", "parapluie_direct": "higher", "unscored": "higher"}
FAST = {"n_bootstrap": 20, "n_draws": 5}


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    gold = (rng.random(n) < 0.5).astype(int)
    pairs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "corpus": np.where(np.arange(n) < n // 2, "A", "B"),
            "source": [f"the cat number {i} sat on the mat" for i in range(n)],
            "hypothesis": [f"a cat {i} sat" if g else f"the dog {i} ran away" for i, g in enumerate(gold)],
            "gold_label": pd.array(gold, dtype="Int64"),
            "generator": rng.choice(["mistral", "llama2"], size=n),
            "lev": rng.random(n) - 0.3 * gold,
            "bleu": rng.random(n) + 0.3 * gold,
            "parapluie_direct": rng.normal(size=n) + 3 * gold - 1,
            "unscored": np.nan,
        }
    )
    rows = []
    for i, g in enumerate(gold):
        for j in range(3):
            judge = f"judge-{(i + j) % 7:05d}"
            rows.append((f"p{i}", judge, ["good", "native"][j % 2], ["very_different", "same_meaning"][g]))
    judgments = pd.DataFrame(rows, columns=["pair_id", "judge", "english_level", "answer"])
    return pairs, with_votes(judgments, VOTE)


def test_it_builds_every_table_and_notes_a_metric_without_scores():
    pairs, judgments = data()
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    assert list(report.tables) == TABLE_NAMES
    assert report.metrics == ["lev", "bleu", "parapluie_direct"]
    assert "unscored has no scores yet." in report.notes
    assert report.summary["n_labelled"] == 60 and report.summary["n_scored"]["unscored"] == 0
    table3 = report.tables["table3"]
    assert {"A", "B", "Global", "MBD"} <= set(table3["corpus"])
    assert "accuracy_ci95" in table3.columns
    assert any(note.startswith("MBD: corpus A has") for note in report.notes)


def test_a_corpus_with_one_class_only_gives_a_note_and_no_auc_there():
    pairs, judgments = data()
    pairs.loc[pairs["corpus"] == "B", "gold_label"] = 1
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    assert any("Corpus B has only paraphrase pairs labelled" in note for note in report.notes)
    auc = report.tables["auc"].set_index(["metric", "corpus"])
    assert np.isnan(auc.loc[("bleu", "B"), "auc"]) and not np.isnan(auc.loc[("bleu", "A"), "auc"])
    assert np.isnan(report.tables["eer"].set_index(["metric", "corpus"]).loc[("bleu", "B"), "eer"])


def test_constant_scores_and_a_lone_judge_give_notes_not_errors():
    pairs, judgments = data(n=12)
    pairs["bleu"] = 0.5
    judgments = judgments.assign(judge="judge-00001").drop_duplicates(["pair_id", "judge"])
    report = build_report(pairs, judgments, DIRECTIONS, label_source="human", **FAST)
    assert any(note.startswith("BLEU gives the same score to every pair") for note in report.notes)
    assert "Fewer than two judges: inter-annotator agreement is undefined." in report.notes
    assert report.tables["agreement"]["value"].isna().all()


def test_no_judgment_and_no_label_still_give_a_report():
    pairs, _ = data(n=10)
    empty = with_votes(pd.DataFrame(columns=["pair_id", "judge", "english_level", "answer"]), VOTE)
    report = build_report(pairs, empty, DIRECTIONS, label_source="human", **FAST)
    assert "No pair has a human label yet: no statistic can be computed." in report.notes
    assert report.tables["table3"].empty and report.tables["table2"].loc[0, "n_unlabelled"] == 5


def test_the_english_level_breakdown_compares_judges_with_gold_and_with_the_others():
    judgments = pd.DataFrame(
        [
            ("a", "j1", "good", "same_meaning"),
            ("a", "j2", "native", "mostly_similar"),
            ("a", "j3", "native", "very_different"),
            ("b", "j1", "good", "dont_know"),
        ],
        columns=["pair_id", "judge", "english_level", "answer"],
    ).pipe(with_votes, VOTE)
    frame = pd.DataFrame({"pair_id": ["a", "b"], "gold_label": pd.array([1, 0], dtype="Int64")})
    table = by_english_level(judgments, frame).set_index("english_level")
    assert table.loc["good", "share_dont_know"] == 0.5 and table.loc["good", "agreement_with_gold"] == 1.0
    assert table.loc["native", "agreement_with_gold"] == 0.5
    # j3 (0) against the others' majority 1 (2-0): disagrees; j2 against (1 vs 1): no majority
    assert table.loc["native", "agreement_with_others"] == 0.0 and table.loc["native", "n_with_others"] == 1
    assert table.loc["all", "n_judgments"] == 4


def test_the_generator_breakdown_and_its_note_when_no_template_is_recorded():
    pairs, judgments = data()
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    table = report.tables["by_group"]
    assert set(table["group_by"]) == {"generator", "english_level"}
    table = table[table["group_by"] == "generator"]
    assert set(table["group"]) == {"mistral", "llama2"}
    assert "No pair records a template: the breakdown by template is empty." in report.notes
    table, _ = by_group(report.points.assign(generator=pairs["generator"]), ["bleu"], DIRECTIONS)
    assert table["n"].sum() == 60


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml")])
def test_figures_are_image_bytes(fmt, magic):
    pairs, judgments = data(n=30)
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    assert figure2(report.points, report.metrics, report.directions, fmt=fmt).startswith(magic)
    curves = report.tables["curves_rank"]
    assert curves_figure(curves, report.metrics, corpus="A", x="rank", fmt=fmt).startswith(magic)


def test_the_english_level_breakdown_labels_pairs_by_that_levels_judges_only():
    pairs, judgments = data()
    # The native judges disagree with everyone on the first ten pairs.
    flip = judgments["pair_id"].isin([f"p{i}" for i in range(10)]) & (judgments["english_level"] == "native")
    judgments.loc[flip, "answer"] = judgments.loc[flip, "answer"].map(
        {"very_different": "same_meaning", "same_meaning": "very_different"}
    )
    judgments = with_votes(judgments, VOTE)  # the flipped answers' votes
    report = build_report(pairs, judgments, DIRECTIONS, label_source="human", **FAST)
    table = report.tables["by_group"].query("group_by == 'english_level' and metric == 'bleu'").set_index("group")
    for level in ("good", "native"):
        mine = judgments[judgments["english_level"] == level]
        votes = mine.assign(yes=mine["answer"] == "same_meaning").groupby("pair_id")["yes"].agg(["sum", "count"])
        decided = votes[2 * votes["sum"] != votes["count"]]
        assert table.loc[level, "n"] == len(decided)
        assert table.loc[level, "n_paraphrase"] == int((2 * decided["sum"] > decided["count"]).sum())


def test_a_gold_report_ranks_against_the_gold_labels_and_a_human_one_against_the_judges():
    pairs, judgments = data()
    gold = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST).tables["rank_correlation"]
    human = build_report(pairs, judgments, DIRECTIONS, label_source="human", **FAST).tables["rank_correlation"]
    assert set(gold["against"]) == {"label"} and gold["spearman_rho"].notna().all()
    assert set(human["against"]) == {"mean_ordinal"}


def test_table3_shows_the_tied_range_and_the_answer_setting_at_zero():
    from reports.analysis.present import wide

    pairs, judgments = data()
    pairs["lev"] = np.round(pairs["lev"], 1)  # coarse scores: ties in accuracy
    answers = {"parapluie_direct": "Yes/No:10539/5230"}
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", answers=answers, **FAST)
    table3 = report.tables["table3"]
    prior = table3[table3["threshold_kind"] == "a_priori"]
    assert set(prior["answer"]) == {"Yes/No:10539/5230"}
    cells = wide(report, "table3")
    threshold_cells = [c for c in cells.xs("Threshold", level=1).to_numpy().ravel() if isinstance(c, str)]
    # In words: the token ids stay in the CSV, for scripts.
    assert any(cell.endswith("(answer Yes/No)") for cell in threshold_cells)
    assert not any("10539" in cell for cell in threshold_cells)
    tied = table3[(table3["threshold_kind"] == "a_posteriori") & (table3["n_tied"] > 1)]
    for row in tied.itertuples():
        low, high = f"{row.threshold_low:.2f}", f"{row.threshold_high:.2f}"
        if low != high and row.corpus != "MBD":
            assert f"(tied {low} to {high})" in " ".join(threshold_cells)
    # A range that prints as one number is printed once, without a note.
    assert not re.search(r"\(tied (\S+) to \1\)", " ".join(threshold_cells))
