"""Spearman and Kendall from one sort per variable are scipy's floats exactly (==), ties, NaN and tiny n included."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reports.analysis.rank_correlation import Ranks, kendall_tau_b, spearman
from reports.analysis.ranking import rank_correlations


def targets(rng, n):
    """The labels a report ranks against: 0/1 gold, mean 4-point answers, and harder cases."""
    return {
        "gold": rng.integers(0, 2, n).astype(float),
        "mean_ordinal": rng.integers(1, 5, n) + rng.integers(0, 3, n) / 3,
        "ordinal": rng.integers(1, 5, n).astype(float),
        "continuous": rng.random(n),
    }


def scores(rng, n, target):
    return {
        "continuous": rng.normal(size=n) + target,
        "rounded": np.round(rng.random(n) + 0.3 * target, 1),  # many ties
        "distance": -np.floor(rng.random(n) * 5),  # few integer values, negated
        "independent": rng.random(n),
    }


def scipy_four(x, y):
    rho, tau = stats.spearmanr(x, y), stats.kendalltau(x, y)
    return rho.statistic, rho.pvalue, tau.statistic, tau.pvalue


def ours_four(x, y):
    rx, ry = Ranks(x), Ranks(y)
    return spearman(rx, ry) + kendall_tau_b(rx, ry, x, y)


@pytest.mark.parametrize("n", [3, 4, 5, 12, 33, 34, 200, 3001])
@pytest.mark.parametrize("seed", range(6))
def test_it_gives_scipys_exact_floats(n, seed):
    rng = np.random.default_rng(seed * 1000 + n)
    for target_name, y in targets(rng, n).items():
        for score_name, x in scores(rng, n, y).items():
            if np.ptp(x) == 0 or np.ptp(y) == 0:
                continue  # constant: the report leaves the row empty before asking
            assert ours_four(x, y) == scipy_four(x, y), (target_name, score_name)


def test_perfect_agreement_and_scipys_exact_p_value_without_ties():
    x = np.arange(40, dtype=float)
    for y in (x * 2, -x, np.r_[x[1::-1], x[2:]]):  # all pairs in order, none, one out of order
        assert ours_four(x, y) == scipy_four(x, y)


def test_one_tie_run_against_a_binary_target():
    x = np.r_[np.zeros(500), np.ones(3)]
    y = np.r_[np.ones(250), np.zeros(253)]
    assert ours_four(x, y) == scipy_four(x, y)


def test_too_many_values_on_both_sides_go_to_scipy_itself():
    rng = np.random.default_rng(7)
    x, y = rng.random(20_000), rng.random(20_000)
    assert ours_four(x, y) == scipy_four(x, y)


@pytest.mark.parametrize("label_source", ["gold", "human"])
def test_the_table_is_scipys_on_corpora_with_nan_and_all_tied_scores(label_source):
    rng = np.random.default_rng(3)
    n = 900
    y = targets(rng, n)
    frame = pd.DataFrame(
        {
            "corpus": np.where(rng.random(n) < 0.4, "A", "B"),
            "paraphrase": pd.array(y["gold"].astype(int), dtype="Int64"),
            "mean_ordinal": np.where(rng.random(n) < 0.1, np.nan, y["mean_ordinal"]),
            **scores(rng, n, y["gold"]),
            "tied": np.full(n, 0.5),
        }
    )
    frame.loc[rng.random(n) < 0.2, "rounded"] = np.nan  # scored on part of the pairs only
    directions = {
        "continuous": "higher",
        "rounded": "higher",
        "distance": "lower",
        "independent": "higher",
        "tied": "higher",
    }
    table, _ = rank_correlations(frame, list(directions), directions, label_source)
    target = "paraphrase" if label_source == "gold" else "mean_ordinal"
    assert list(table["metric"]) == [m for m in directions for _ in ("A", "B", "Global")]
    for row in table.itertuples():
        rows = frame if row.corpus == "Global" else frame[frame["corpus"] == row.corpus]
        rows = rows[rows[target].notna() & rows[row.metric].notna()]
        x = rows[row.metric].to_numpy(dtype=float) * (-1 if directions[row.metric] == "lower" else 1)
        if row.metric == "tied":
            assert np.isnan([row.spearman_rho, row.spearman_p, row.kendall_tau, row.kendall_p]).all()
            continue
        expected = scipy_four(x, rows[target].to_numpy(dtype=float))
        assert (row.spearman_rho, row.spearman_p, row.kendall_tau, row.kendall_p) == expected
        assert row.n == len(rows)
