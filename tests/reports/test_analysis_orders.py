"""Each metric sorted once for every step that sorts it (`common.ScoreOrders`): the same tables as steps that
sort for themselves, which is what they do under a runner that reuses stored results (the live page)."""

import numpy as np
import pandas as pd
import pytest

from reports.analysis import build_report, meta, ranking
from reports.analysis.common import ScoreOrders, closest_first, orient
from reports.analysis.report import Direct
from tests.reports.test_analysis_report import DIRECTIONS, FAST, data

METRICS = {"similar": "higher", "distance": "lower"}


class SortingInEachStep(Direct):
    """Every step computed here, each sorting the scores it reads: as under a runner that reuses results."""

    reuses = True


def scores(seed, n=500):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "similar": np.round(rng.normal(size=n), 1),  # many ties
            "distance": rng.integers(0, 6, n) * 1.0,  # runs of ties, sorted the other way
        }
    )
    frame.loc[rng.random(n) < 0.1, "similar"] = np.nan  # unscored pairs
    return frame, rng


@pytest.mark.parametrize("seed", range(4))
def test_the_sort_of_some_rows_cut_from_the_sort_of_all_is_those_rows_own_sort(seed):
    frame, rng = scores(seed)
    n = len(frame)
    rows = np.ones(n, dtype=bool) if seed % 2 else rng.random(n) < 0.7
    orders = ScoreOrders(frame, list(METRICS), METRICS, rows)
    corpus = rng.integers(0, 3, n)
    for keep in [rows, rows & (corpus == 1), rows & frame["similar"].notna().to_numpy(), np.zeros(n, dtype=bool)]:
        for metric, direction in METRICS.items():
            oriented = orient(frame[metric].to_numpy(float)[keep], direction)
            assert np.array_equal(orders.closest_first(metric, keep), closest_first(oriented))
            ascending = orders.ascending(metric, keep)
            assert sorted(ascending) == list(range(int(keep.sum())))  # each kept row once
            assert np.array_equal(oriented[ascending], np.sort(oriented), equal_nan=True)  # lowest first, NaN last


def test_rows_that_were_not_sorted_are_refused():
    frame, rng = scores(0)
    rows = rng.random(len(frame)) < 0.5
    orders = ScoreOrders(frame, list(METRICS), METRICS, rows)
    with pytest.raises(ValueError, match="not sorted"):
        orders.closest_first("similar", ~rows)
    with pytest.raises(ValueError, match="not sorted"):
        orders.ascending("distance", np.ones(len(frame) + 1, dtype=bool))


@pytest.mark.parametrize("label_source", ["gold", "human"])
def test_a_report_whose_steps_share_the_sorts_is_the_report_whose_steps_sort_for_themselves(monkeypatch, label_source):
    pairs, judgments = data(n=400, seed=5)
    pairs["bleu"] = pairs["bleu"].round(1)  # ties
    pairs.loc[::7, "lev"] = np.nan  # a metric that scored some pairs only
    # The large-sample paths (DeLong, Fisher's z), which cut the shared sorts too, from 100 labelled pairs on.
    monkeypatch.setattr(ranking, "BOOTSTRAP_MAX_PAIRS", 100)
    monkeypatch.setattr(meta, "BOOTSTRAP_MAX_PAIRS", 100)
    cuts = []
    for name in ("closest_first", "ascending"):
        original = getattr(ScoreOrders, name)
        monkeypatch.setattr(
            ScoreOrders, name, lambda self, *args, _original=original: cuts.append(args) or _original(self, *args)
        )
    shared = build_report(pairs, judgments, DIRECTIONS, label_source=label_source, **FAST)
    steps_cut = len(cuts)
    own = build_report(pairs, judgments, DIRECTIONS, label_source=label_source, runner=SortingInEachStep(), **FAST)
    assert steps_cut > 0 and len(cuts) == steps_cut  # the shared sorts were used, then none
    assert "DeLong" in set(shared.tables["metric_clusters"]["method"])
    for name, table in own.tables.items():
        pd.testing.assert_frame_equal(shared.tables[name], table, check_exact=True, obj=name)
    assert shared.notes == own.notes


def test_sorts_that_cannot_be_shared_leave_each_step_to_sort_for_itself(monkeypatch):
    """Data that breaks the shared sort takes down no table: the steps sort for themselves (and a step that
    cannot loses only its own tables, as always)."""
    pairs, judgments = data(n=200, seed=6)
    expected = build_report(pairs, judgments, DIRECTIONS, label_source="gold", runner=SortingInEachStep(), **FAST)

    def broken(self, *args, **kwargs):
        raise ValueError("a sort that cannot be made")

    monkeypatch.setattr(ScoreOrders, "__init__", broken)
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    for name, table in expected.tables.items():
        pd.testing.assert_frame_equal(report.tables[name], table, check_exact=True, obj=name)
    assert report.notes == expected.notes
