"""No degenerate data takes a report down (issue 48): every step of the analysis, on constant labels, one class,
one judge, one system, all ties, every score equal, NaN scores or a fold with one value, gives its tables or a
note, never an exception; and a step that raises all the same loses its own tables only."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.tasktypes.criteria.scale import CRITERIA
from annotation.tasktypes.similarity.scale import VOTE
from annotation.votes import with_votes
from metrics.pem import FEATURES
from reports.analysis import TABLE_NAMES, build_report, ranking
from reports.analysis.common import failure_notes
from reports.analysis.present import TABLES
from reports.task_sections.criteria import CRITERIA_TABLES, tables_of
from tests.reports.test_report_views import empty_cache, judged_campaign  # noqa: F401 - fixtures

FAST = {"n_bootstrap": 10, "n_draws": 3, "per_label": 5}
ANSWERS = ["very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know"]
LOOSE = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def column(draw, n, kind):
    """A metric's scores of a degenerate kind: all equal, all missing, two values (all ties), some missing, spread."""
    if kind == "equal":
        return np.full(n, draw(st.floats(-5, 5, allow_nan=False)))
    if kind == "missing":
        return np.full(n, np.nan)
    if kind == "ties":
        return np.array([float(i % 2) for i in range(n)])
    values = np.array(draw(st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n)))
    if kind == "some missing":
        values[:: draw(st.integers(1, 3))] = np.nan
    return values


KINDS = ["equal", "missing", "ties", "some missing", "spread"]


@st.composite
def degenerate_frames(draw):
    n = draw(st.integers(1, 14))
    n_corpora, n_systems, n_judges = draw(st.integers(1, 2)), draw(st.integers(0, 3)), draw(st.integers(0, 3))
    gold = draw(st.sampled_from(["one class", "other class", "missing", "mixed"]))
    gold_labels = {
        "one class": [1] * n,
        "other class": [0] * n,
        "missing": [None] * n,
        "mixed": draw(st.lists(st.sampled_from([0, 1, None]), min_size=n, max_size=n)),
    }[gold]
    pairs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "corpus": [f"c{i % n_corpora}" for i in range(n)],
            "source": [f"source {i % max(1, n // 2)}" for i in range(n)],
            "hypothesis": [f"hypothesis {i}" for i in range(n)],
            "gold_label": pd.array(gold_labels, dtype="Int64"),
            "system": [f"s{i % n_systems}" if n_systems else "" for i in range(n)],
            "lev": column(draw, n, draw(st.sampled_from(KINDS))),
            "bleu": column(draw, n, draw(st.sampled_from(KINDS))),
        }
    )
    answers = draw(st.sampled_from([["same_meaning"], ["dont_know"], ANSWERS]))
    rows = [
        (f"p{i}", f"judge-{j}", "good", draw(st.sampled_from(answers)))
        for i in range(n)
        for j in range(n_judges)
        if draw(st.booleans()) or n_judges == 1
    ]
    judgments = pd.DataFrame(rows, columns=["pair_id", "judge", "english_level", "answer"])
    return pairs, with_votes(judgments, VOTE)  # the vote columns, as the similarity type's frames carry them


@pytest.mark.parametrize("label_source", ["human", "gold"])
@LOOSE
@given(frames=degenerate_frames())
def test_every_table_of_the_report_stands_on_degenerate_data(label_source, frames):
    """The report's own tables (every task type's report is built on them): none of their steps raises."""
    pairs, judgments = frames
    report = build_report(pairs, judgments, {"lev": "lower", "bleu": "higher"}, label_source=label_source, **FAST)
    assert list(report.tables) == TABLE_NAMES
    assert failure_notes(report.tables) == []
    assert all(isinstance(table, pd.DataFrame) for table in report.tables.values())


@st.composite
def degenerate_ratings(draw):
    n = draw(st.integers(1, 30))
    n_sources, n_systems, n_judges = draw(st.integers(1, 8)), draw(st.integers(0, 3)), draw(st.integers(1, 3))
    pairs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "corpus": "pem",
            "source": [f"source {i % n_sources}" for i in range(n)],
            "system": [f"s{i % n_systems}" if n_systems else "" for i in range(n)],
            **{feature: column(draw, n, draw(st.sampled_from(KINDS))) for feature in FEATURES},
        }
    )
    constant = draw(st.sampled_from([None, *CRITERIA]))  # a criterion every judge rated alike (or none)
    rows = []
    for i in range(n):
        for j in range(n_judges):
            ratings = {name: 3 if name == constant else draw(st.integers(1, 5)) for name in CRITERIA}
            rows.append({"pair_id": f"p{i}", "judge": f"judge-{j}", "english_level": "good", **ratings})
    return pairs, pd.DataFrame(rows, columns=["pair_id", "judge", "english_level", *CRITERIA])


@LOOSE
@given(frames=degenerate_ratings())
def test_every_criteria_table_stands_on_degenerate_ratings(frames):
    pairs, judgments = frames
    tables = tables_of(pairs, judgments, dict.fromkeys(FEATURES, "higher"))
    assert failure_notes(tables) == []
    assert {table.name for table in CRITERIA_TABLES} <= set(tables)


def test_pem_fitted_on_constant_overall_ratings_gives_its_tables():
    """The pilot of issue 48: every judge gave the same Overall; PEM's fit (0 support vectors) still predicts."""
    rng = np.random.default_rng(5)
    n = 40
    pairs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "corpus": "pem",
            "source": [f"source {i % 8}" for i in range(n)],
            "system": [f"s{i % 4}" for i in range(n)],
            **{feature: rng.random(n) for feature in FEATURES},
        }
    )
    judgments = pd.DataFrame(
        [
            {"pair_id": f"p{i}", "judge": f"j{j}", "english_level": "good", **dict.fromkeys(CRITERIA, 3)}
            for i in range(n)
            for j in range(2)
        ]
    )
    tables = tables_of(pairs, judgments, dict.fromkeys(FEATURES, "higher"))
    assert failure_notes(tables) == []
    fit = tables["criteria_pem_fit"]
    assert len(fit) == 2 and (fit["n_test_pairs"] == n).all()
    assert not tables["criteria_by_system"].empty


def test_a_step_that_raises_loses_its_own_tables_only(monkeypatch):
    """Whatever a step meets that it did not foresee, the report stands: its tables empty with a note, the rest."""
    from tests.reports.test_analysis_report import data

    def broken(*args, **kwargs):
        raise IndexError("index 0 is out of bounds for axis 0 with size 0")

    monkeypatch.setattr(ranking, "auc_tables", broken)
    pairs, judgments = data(n=30)
    report = build_report(pairs, judgments, {"lev": "lower", "bleu": "higher"}, label_source="gold", **FAST)
    lost = {table.name for table in TABLES if table.build == "auc"}
    assert all(report.tables[name].empty for name in lost)
    assert not report.tables["table3"].empty and not report.tables["table1"].empty
    (note,) = failure_notes(report.tables)
    assert "could not be computed (IndexError" in note and note in report.notes


def test_a_criteria_table_that_raises_loses_itself_only(monkeypatch):
    from reports.analysis import criteria

    def broken(*args, **kwargs):
        raise IndexError("tuple index out of range")

    monkeypatch.setattr(criteria, "pem_fit", broken)
    rng = np.random.default_rng(1)
    pairs = pd.DataFrame(
        {"pair_id": ["a", "b"], "source": ["x", "y"], "system": ["s", "t"], **{f: rng.random(2) for f in FEATURES}}
    )
    judgments = pd.DataFrame([{"pair_id": p, "judge": "j", **dict.fromkeys(CRITERIA, 4)} for p in ("a", "b")])
    tables = tables_of(pairs, judgments, dict.fromkeys(FEATURES, "higher"))
    assert tables["criteria_pem_fit"].empty and not tables["criteria_by_system"].empty
    assert len(failure_notes(tables)) == 1


def broken_step(*args, **kwargs):
    """A step that meets what it did not foresee (a module-level function: the live report's runner keys on it)."""
    raise IndexError("index 0 is out of bounds for axis 0 with size 0")


@pytest.mark.parametrize("step", ["auc_tables", "system_report", "threshold_tables", "rank_correlations"])
def test_the_report_page_stands_when_a_step_raises(client, researcher, judged_campaign, monkeypatch, step):  # noqa: F811
    """The page shows the other tables and the note, never a 500 (the HTML download too)."""
    from django.urls import reverse

    from reports.analysis import classification, systems

    module = {"auc_tables": ranking, "system_report": systems, "threshold_tables": classification}.get(step, ranking)
    monkeypatch.setattr(module, step, broken_step)
    client.force_login(researcher)
    page = client.get(reverse("reports-show-report", args=[judged_campaign.slug]) + "?label=gold")
    assert page.status_code == 200
    assert "could not be computed (IndexError" in page.content.decode()
    download = client.get(reverse("reports-download-report-html") + f"?c={judged_campaign.slug}&label=gold")
    assert download.status_code == 200


@st.composite
def degenerate_taggings(draw):
    """ParaTag taggings of a degenerate kind: no pair, no judge, one judge, every word tagged or none, every judge
    alike, one-word sentences; metrics of every kind above, 5-way answers or none."""
    n = draw(st.integers(0, 8))
    n_judges = draw(st.integers(0, 3))
    kind = draw(st.sampled_from(["none tagged", "all tagged", "alike", "any"]))
    rows = []
    for i in range(n):
        lengths = {side: draw(st.integers(1, 5)) for side in ("source", "hypothesis")}
        alike = {side: draw(st.lists(st.integers(0, 1), min_size=k, max_size=k)) for side, k in lengths.items()}
        for j in range(n_judges):
            if not (draw(st.booleans()) or j == 0):
                continue
            tags = {
                "none tagged": {side: [0] * k for side, k in lengths.items()},
                "all tagged": {side: [1] * k for side, k in lengths.items()},
                "alike": alike,
                "any": {side: draw(st.lists(st.integers(0, 1), min_size=k, max_size=k)) for side, k in lengths.items()},
            }[kind]
            rows.append({"pair_id": f"p{i}", "judge": f"judge-{j}", **{f"{s}_tags": t for s, t in tags.items()}})
    taggings = pd.DataFrame(rows, columns=["pair_id", "judge", "source_tags", "hypothesis_tags"])
    pairs = pd.DataFrame(
        {
            "pair_id": pd.Series([f"p{i}" for i in range(n)], dtype="str"),  # as `load_frames` types them
            "corpus": pd.Series([f"c{i % 2}" for i in range(n)], dtype="str"),
            "system": pd.Series([draw(st.sampled_from(["s0", "s1", "(no system)"])) for _ in range(n)], dtype="str"),
            "lev": column(draw, n, draw(st.sampled_from(KINDS))),
        }
    )
    if draw(st.booleans()):
        pairs["mean_ordinal"] = column(draw, n, draw(st.sampled_from(KINDS)))
    return pairs, taggings


@LOOSE
@given(frames=degenerate_taggings())
def test_every_span_table_stands_on_degenerate_taggings(frames):
    """The span report's tables (spans and similarity+spans campaigns), but the detectors', which read stored
    models: each is a table, never an exception."""
    from reports.analysis.spans import span_analysis
    from reports.task_sections.spans import SPAN_TABLE_NAMES

    pairs, taggings = frames
    tables = span_analysis(taggings, pairs, {"lev": "lower"})
    assert set(tables) == set(SPAN_TABLE_NAMES) - {"detector_vs_judges", "span_detectors"}
    assert all(isinstance(table, pd.DataFrame) for table in tables.values())
