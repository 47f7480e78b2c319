"""The tables for reading: the reader's words, no index artefacts, best values in bold, intervals."""

import dataclasses
import re

import pandas as pd
import pytest

from annotation.tasktypes.similarity.scale import ANSWERS
from metrics.registry import METRICS
from reports.analysis import build_report
from reports.analysis.agreement import STATISTIC_TITLES
from reports.analysis.present import best_cells, html, latex, shown
from reports.analysis.vocabulary import metric_title, title_for
from tests.reports.test_analysis_report import DIRECTIONS, FAST, data

INTERNAL_NAMES = [*METRICS, *ANSWERS, *STATISTIC_TITLES, "non_paraphrase", "a_posteriori", "a_priori"]


@pytest.fixture(scope="module")
def report():
    pairs, judgments = data()
    return build_report(pairs, judgments, DIRECTIONS, label_source="human", **FAST)


def visible_text(markup):
    return re.sub(r"<[^>]+>", " ", markup)


def test_it_names_metrics_as_papers_print_them_with_their_direction():
    assert metric_title("lev", "lower") == "Lev. ↓"
    assert metric_title("parapluie_fs_direct", "higher") == "ParaPLUIE FS-Direct ↑"
    assert metric_title("not_registered") == "not_registered"


def test_it_spells_out_internal_names():
    assert title_for("non_paraphrase") == "Non-paraphrase"
    assert title_for("krippendorff_alpha_ordinal") == "Krippendorff's α (ordinal)"
    assert title_for("same_meaning") == "Same meaning" and title_for("dont_know") == "Don't know"
    assert title_for("something_new") == "Something new"


@pytest.mark.parametrize("name", ["table1", "table3", "table4", "eer", "labels", "agreement", "auc", "by_group"])
def test_no_internal_name_or_index_artefact_reaches_the_page(report, name):
    text = visible_text(html(report, name))
    words = set(re.findall(r"[A-Za-z_]+", text))
    assert not words & set(INTERNAL_NAMES), words & set(INTERNAL_NAMES)
    headers = set(re.findall(r"<th[^>]*>([^<]*)</th>", html(report, name)))
    assert not headers & {"column", "row", "metric", "corpus", "label"}, headers
    assert 'scope="col"' in html(report, name)


def test_table3_is_set_as_the_paper_sets_it_and_bolds_the_best_metric_of_each_rate(report):
    table3 = shown(report, "table3")
    # The paper's Table 3: a block of rows per metric (threshold first), one column per corpus, the MBD last.
    assert list(table3.table.index.get_level_values(0).unique()) == [
        "Lev. ↓",
        "BLEU ↑",
        "ParaPLUIE Direct ↑",
        "ParaPLUIE Direct ↑, threshold 0",
    ]
    assert list(table3.table.index.get_level_values(1)[:5]) == ["Threshold", "Acc.", "F1", "Recall", "Precision"]
    assert list(table3.table.columns) == ["A", "B", "Global", "MBD"]
    accuracy = table3.table.xs("Acc.", level=1)["A"]
    best = table3.bold.xs("Acc.", level=1)["A"]
    values = accuracy.map(lambda cell: float(cell.split()[0]) if cell != "–" else float("nan"))
    assert best.any() and values[best].min() == values.max()
    assert not table3.bold.xs("Threshold", level=1).to_numpy().any()
    assert "Bold: the best metric for each rate in each column" in table3.caption
    mbd = report.tables["table3"].query("corpus == 'MBD'").iloc[0]
    cell = table3.table.loc[("Lev. ↓", "Acc."), "MBD"]
    if mbd["accuracy_ci95"] > 0:
        assert re.fullmatch(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", cell)
    else:  # identical draws (a corpus smaller than a draw): the interval has no width and is not written
        assert cell == f"{mbd['accuracy']:.2f}"


def test_table3_names_the_answer_setting_in_words_never_its_token_ids(report):
    frame = report.tables["table3"].copy()
    frame.loc[frame["threshold_kind"] == "a_priori", "answer"] = "Yes/No:10539/5230"
    changed = dataclasses.replace(report, tables={**report.tables, "table3": frame})
    cell = shown(changed, "table3").table.loc[("ParaPLUIE Direct ↑, threshold 0", "Threshold"), "A"]
    assert cell == "0.00 (answer Yes/No)"
    assert "10539" not in latex(changed, "table3")


def test_a_zero_width_mbd_interval_is_written_as_the_value_alone_and_a_real_one_in_full(report):
    table3 = report.tables["table3"].copy()
    first = table3.index[table3["corpus"] == "MBD"][0]
    for width, expected in ((0.0, "0.50"), (0.1, "0.50 [0.40, 0.60]")):
        table3.loc[first, ["accuracy", "accuracy_ci95"]] = [0.5, width]
        changed = dataclasses.replace(report, tables={**report.tables, "table3": table3})
        assert shown(changed, "table3").table.loc[("Lev. ↓", "Acc."), "MBD"] == expected


def test_auc_cells_read_as_value_and_interval(report):
    auc = shown(report, "auc").table
    assert all(re.fullmatch(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", cell) for cell in auc.to_numpy().ravel())
    assert "<strong>" in html(report, "auc") and "Bold: the highest AUC of each column" in html(report, "auc")


def test_best_cells_bold_every_tie_and_skip_missing_values():
    values = pd.DataFrame({"a": [0.5, 0.9, 0.9], "b": [None, 0.1, 0.2]})
    assert best_cells(values, axis=0).to_numpy().tolist() == [[False, False], [True, False], [True, True]]
    assert best_cells(values, axis=0, higher=False)["b"].tolist() == [False, True, False]


def test_the_latex_of_a_table_has_its_stub_and_bold_cells(report):
    tex = latex(report, "auc")
    assert "\\toprule" in tex and "\\textbf{" in tex and "\\label{tab:auc}" in tex
    assert "Metric" in tex and "Lev. $\\downarrow$" in tex


def test_the_latex_stub_columns_are_left_aligned_and_numbers_right_aligned(report):
    tex = latex(report, "table3")
    n_columns = len(shown(report, "table3").table.columns)
    assert f"{{ll{'r' * n_columns}}}" in tex
    assert "ParaPLUIE Direct $\\uparrow$, threshold 0 & Threshold" in tex


def test_table3_states_a_tied_threshold_range_when_the_analysis_gives_one(report):
    frame = report.tables["table3"].copy()
    first = frame.index[(frame["corpus"] == "A") & (frame["threshold_kind"] == "a_posteriori")][0]
    frame.loc[first, ["threshold_low", "threshold_high"]] = [0.25, 0.5]

    class Tied:
        tables = {"table3": frame}
        directions, corpora = report.directions, report.corpora

    cell = shown(Tied, "table3").table.loc[(metric_title(frame.loc[first, "metric"], "lower"), "Threshold"), "A"]
    assert cell.endswith("(tied 0.25 to 0.50)")


@pytest.mark.parametrize(
    ("low", "high", "note"),
    [
        (0.5201, 0.5249, ""),  # prints "0.52 to 0.52": one number, no range
        (0.52, 0.55, " (tied 0.52 to 0.55)"),
        (0.52, 0.52, ""),
    ],
)
def test_a_tie_is_printed_once_when_its_range_prints_as_one_number(low, high, note):
    from reports.analysis.present.layouts import _threshold_note

    row = {"threshold_kind": "a_posteriori", "threshold_low": low, "threshold_high": high}
    assert _threshold_note(row) == note


def test_one_corpus_gets_no_global_column_repeating_it():
    pairs, judgments = data()
    pairs["corpus"] = "MRPC"
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    assert "Global" in set(report.tables["table3"]["corpus"])  # the CSV keeps it
    for name in ("table1", "table3", "table4", "auc"):
        columns = shown(report, name).table.columns.get_level_values(0)
        assert "MRPC" in columns and "Global" not in columns, name
