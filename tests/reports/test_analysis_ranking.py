import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from reports.analysis.ranking import _placements, auc_tables, bootstrap_indices, rank_correlations, weighted_auc

DIRECTIONS = {"good": "higher", "dist": "lower", "weak": "higher"}


def frame_of(n=120, seed=0):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.55).astype(int)
    good = labels + rng.normal(0, 0.7, n)
    return pd.DataFrame(
        {
            "corpus": np.where(np.arange(n) % 3 == 0, "A", "B"),
            "paraphrase": pd.array(labels, dtype="Int64"),
            "good": np.round(good, 1),  # ties
            "dist": -good + rng.normal(0, 0.3, n),
            "weak": labels * 0.2 + rng.normal(0, 1, n),
            "mean_ordinal": np.clip(np.round(labels * 2 + 1.5 + rng.normal(0, 0.8, n)), 1, 4),
        }
    )


def test_the_weighted_auc_with_unit_weights_is_sklearns():
    frame = frame_of()
    labels = frame["paraphrase"].to_numpy(dtype=int) == 1
    assert weighted_auc(frame["good"].to_numpy(), labels, np.ones((len(frame), 1)))[0] == pytest.approx(
        roc_auc_score(labels, frame["good"])
    )


def test_auc_is_oriented_by_direction_and_its_ci_is_the_bootstrap_of_sklearn():
    frame = frame_of()
    auc, _ = auc_tables(frame, list(DIRECTIONS), DIRECTIONS, n_bootstrap=60, seed=11)
    labels = frame["paraphrase"].to_numpy(dtype=int)
    row = auc.set_index(["metric", "corpus"]).loc[("dist", "Global")]
    assert row["auc"] == pytest.approx(roc_auc_score(labels, -frame["dist"]))
    indices = np.concatenate(list(bootstrap_indices(len(frame), 60, 11)))
    resampled = [roc_auc_score(labels[i], -frame["dist"].to_numpy()[i]) for i in indices if len(set(labels[i])) == 2]
    assert (row["ci95_low"], row["ci95_high"]) == pytest.approx(tuple(np.percentile(resampled, [2.5, 97.5])))
    per_corpus = auc.set_index(["metric", "corpus"]).loc[("good", "A"), "auc"]
    part = frame[frame["corpus"] == "A"]
    assert per_corpus == pytest.approx(roc_auc_score(part["paraphrase"].astype(int), part["good"]))


def test_the_paired_test_uses_the_same_resamples_for_both_metrics():
    frame = frame_of(n=300)
    _, tests = auc_tables(frame, list(DIRECTIONS), DIRECTIONS, n_bootstrap=200, seed=5)
    labels = frame["paraphrase"].to_numpy(dtype=int)
    indices = np.concatenate(list(bootstrap_indices(len(frame), 200, 5)))
    differences = np.array(
        [
            roc_auc_score(labels[i], frame["good"].to_numpy()[i])
            - roc_auc_score(labels[i], frame["weak"].to_numpy()[i])
            for i in indices
        ]
    )
    observed = roc_auc_score(labels, frame["good"]) - roc_auc_score(labels, frame["weak"])
    expected = (1 + np.sum(np.abs(differences - differences.mean()) >= abs(observed))) / 201
    row = tests.set_index(["corpus", "metric_a", "metric_b"]).loc[("Global", "good", "weak")]
    assert row["difference"] == pytest.approx(observed)
    assert row["p_value"] == pytest.approx(expected)
    assert row["p_value"] < 0.05  # a strong metric against a weak one


def test_a_metric_scored_on_part_of_the_pairs_is_compared_on_the_common_pairs():
    frame = frame_of()
    frame.loc[:20, "weak"] = np.nan
    auc, tests = auc_tables(frame, list(DIRECTIONS), DIRECTIONS, n_bootstrap=30, seed=1)
    kept = frame["weak"].notna()
    row = auc.set_index(["metric", "corpus"]).loc[("weak", "Global")]
    assert row["n"] == kept.sum()
    assert row["auc"] == pytest.approx(
        roc_auc_score(frame.loc[kept, "paraphrase"].astype(int), frame.loc[kept, "weak"])
    )
    test = tests.set_index(["corpus", "metric_a", "metric_b"]).loc[("Global", "good", "weak")]
    assert test["n"] == kept.sum()
    assert test["auc_a"] == pytest.approx(
        roc_auc_score(frame.loc[kept, "paraphrase"].astype(int), frame.loc[kept, "good"])
    )


def test_rank_correlations_match_scipy_with_distances_negated():
    frame = frame_of()
    table, _ = rank_correlations(frame, list(DIRECTIONS), DIRECTIONS)
    row = table.set_index(["metric", "corpus"]).loc[("dist", "Global")]
    assert row["spearman_rho"] == pytest.approx(stats.spearmanr(-frame["dist"], frame["mean_ordinal"]).statistic)
    assert row["kendall_tau"] == pytest.approx(stats.kendalltau(-frame["dist"], frame["mean_ordinal"]).statistic)
    assert row["kendall_p"] == pytest.approx(stats.kendalltau(-frame["dist"], frame["mean_ordinal"]).pvalue)
    assert row["spearman_rho"] > 0


def test_gold_rank_correlations_match_scipy_against_the_01_label():
    frame = frame_of()
    frame["mean_ordinal"] = np.nan  # a gold report may have no judgment at all
    table, notes = rank_correlations(frame, list(DIRECTIONS), DIRECTIONS, label_source="gold")
    assert notes == []
    gold = frame["paraphrase"].to_numpy(dtype=float)
    for corpus, rows in [("A", frame["corpus"] == "A"), ("Global", frame["corpus"].notna())]:
        row = table.set_index(["metric", "corpus"]).loc[("dist", corpus)]
        assert row["against"] == "label" and row["n"] == rows.sum()
        expected_rho = stats.spearmanr(-frame["dist"][rows], gold[rows])
        expected_tau = stats.kendalltau(-frame["dist"][rows], gold[rows])
        assert row["spearman_rho"] == pytest.approx(expected_rho.statistic)
        assert row["spearman_p"] == pytest.approx(expected_rho.pvalue)
        assert row["kendall_tau"] == pytest.approx(expected_tau.statistic)
        assert row["kendall_p"] == pytest.approx(expected_tau.pvalue)
    assert table["spearman_rho"].notna().all()


@pytest.mark.parametrize("seed", range(4))
def test_delong_placements_are_the_counts_a_search_in_each_sorted_class_gives(seed):
    rng = np.random.default_rng(seed)
    n = 2000
    oriented = np.round(rng.normal(size=n), 1) if seed % 2 else rng.integers(-3, 4, n) * 0.5  # many ties
    labels = rng.random(n) < 0.3
    positives, negatives = oriented[labels], oriented[~labels]
    sorted_negatives, sorted_positives = np.sort(negatives), np.sort(positives)
    below = np.searchsorted(sorted_negatives, positives, side="left")
    at_or_below = np.searchsorted(sorted_negatives, positives, side="right")
    under = np.searchsorted(sorted_positives, negatives, side="left")
    at_or_under = np.searchsorted(sorted_positives, negatives, side="right")
    v10, v01 = _placements(oriented, labels)
    assert np.array_equal(v10, (below + at_or_below) / (2 * len(negatives)))
    assert np.array_equal(v01, (2 * len(positives) - under - at_or_under) / (2 * len(positives)))
