import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score, roc_curve

from metrics import registry
from metrics.base import called_paraphrase
from metrics.registry import HIGHER, Entry
from reports.analysis.classification import (
    at_threshold,
    best_rows,
    best_threshold,
    draw_balanced,
    equal_error_rate,
    mixed_balanced,
    scan_thresholds,
    threshold_tables,
)
from reports.analysis.common import closest_first, suborder


def brute_force(scores, labels, direction):
    """Every distinct score as threshold, one at a time, with sklearn."""
    results = []
    for t in sorted(set(scores), reverse=direction == "higher"):
        predicted = (np.asarray(scores) >= t) if direction == "higher" else (np.asarray(scores) <= t)
        results.append(
            (
                t,
                accuracy_score(labels, predicted),
                f1_score(labels, predicted, zero_division=0),
                recall_score(labels, predicted, zero_division=0),
                precision_score(labels, predicted, zero_division=0),
            )
        )
    return results


@pytest.mark.parametrize("direction", ["higher", "lower"])
def test_the_scan_matches_one_threshold_at_a_time(direction):
    rng = np.random.default_rng(1)
    labels = rng.random(60) < 0.5
    scores = np.round(rng.normal(size=60) + labels * (1 if direction == "higher" else -1), 1)  # many ties
    scan = scan_thresholds(scores, labels, direction)
    rates = scan.rates()
    expected = brute_force(scores, labels, direction)
    assert len(scan.thresholds) == len(set(scores))
    for i, (t, accuracy, f1, recall, precision) in enumerate(expected):
        assert scan.thresholds[i] == t
        assert rates["accuracy"][i] == pytest.approx(accuracy)
        assert rates["f1"][i] == pytest.approx(f1)
        assert rates["recall"][i] == pytest.approx(recall)
        assert rates["precision"][i] == pytest.approx(precision)


def test_it_finds_the_best_threshold_by_hand_with_ties():
    # scores 0.9 (P), 0.8 (P), 0.8 (N), 0.5 (N), 0.2 (P)
    # t=0.9: acc 3/5; t=0.8: 3/5; t=0.5: 2/5; t=0.2: 3/5 -> strictest among equals: 0.9
    scores = [0.9, 0.8, 0.8, 0.5, 0.2]
    labels = [1, 1, 0, 0, 1]
    best = best_threshold(scan_thresholds(scores, labels, "higher"))
    assert best == {
        "threshold": 0.9,
        "accuracy": 0.6,
        "f1": 0.5,
        "recall": 1 / 3,
        "precision": 1.0,
        # 0.9, 0.8 and 0.2 all reach 3/5 (not adjacent: 0.5 gives 2/5); the single number is the strictest.
        "threshold_low": 0.2,
        "threshold_high": 0.9,
        "n_tied": 3,
        "threshold_pick": "strictest",
    }


def test_a_distance_reports_its_tied_interval_with_the_strictest_as_the_threshold():
    # LEV (lower is closer): 0.1 P, 0.3 P, 0.4 N, 0.5 P, 0.6 N, 0.9 N.
    # t=0.1: 4/6; t=0.3: 5/6; t=0.4: 4/6; t=0.5: 5/6; t=0.6: 4/6; t=0.9: 3/6.
    # Best 5/6 at 0.3 and 0.5: interval [0.3, 0.5], the strictest (lowest distance) is 0.3.
    scores = [0.1, 0.3, 0.4, 0.5, 0.6, 0.9]
    labels = [1, 1, 0, 1, 0, 0]
    best = best_threshold(scan_thresholds(scores, labels, "lower"))
    assert best["accuracy"] == pytest.approx(5 / 6)
    assert (best["threshold"], best["threshold_low"], best["threshold_high"], best["n_tied"]) == (0.3, 0.3, 0.5, 2)
    frame = pd.DataFrame({"corpus": "c", "paraphrase": labels, "lev": scores})
    row = threshold_tables(frame, ["lev"], {"lev": "lower"})["table3"].iloc[0]
    assert (row["threshold"], row["threshold_low"], row["threshold_high"]) == (0.3, 0.3, 0.5)


def test_the_mbd_tied_interval_matches_the_one_dimensional_scan():
    rng = np.random.default_rng(7)
    labels = rng.random((20, 30)) < 0.5
    oriented = np.round(rng.normal(size=(20, 30)) + labels, 1)
    rows = best_rows(oriented, labels)
    for i in range(20):
        best = best_threshold(scan_thresholds(oriented[i], labels[i], "higher"))
        assert rows["threshold_low"][i] == best["threshold_low"]
        assert rows["threshold_high"][i] == best["threshold_high"]
        assert rows["n_tied"][i] == best["n_tied"]


def test_a_distance_predicts_paraphrases_below_the_threshold():
    # LEV: lower is closer. 0.1 P, 0.2 P, 0.3 N, 0.3 P, 0.7 N -> t=0.2 gives 4/5 correct
    scores = [0.1, 0.2, 0.3, 0.3, 0.7]
    labels = [1, 1, 0, 1, 0]
    best = best_threshold(scan_thresholds(scores, labels, "lower"))
    assert best["threshold"] == 0.2 and best["accuracy"] == 0.8 and best["precision"] == 1.0
    assert best["recall"] == pytest.approx(2 / 3)


def test_the_a_priori_threshold_counts_zero_as_paraphrase():
    result = at_threshold([-1.0, 0.0, 2.0, -3.0], [0, 1, 1, 1], "higher", 0.0)
    assert result["accuracy"] == 0.75 and result["precision"] == 1.0 and result["recall"] == pytest.approx(2 / 3)


def test_the_a_priori_rows_use_the_one_rule_and_show_the_answer_setting():
    frame = pd.DataFrame({"corpus": "c", "paraphrase": [0, 1, 1, 1], "parapluie_direct": [-1.0, 0.0, 2.0, -3.0]})
    answers = {"parapluie_direct": "Yes/No:1/2"}
    table = threshold_tables(frame, ["parapluie_direct"], {"parapluie_direct": "higher"}, answers)["table3"]
    prior = table[(table["threshold_kind"] == "a_priori") & (table["corpus"] == "c")].iloc[0]
    expected = called_paraphrase([-1.0, 0.0, 2.0, -3.0], 0.0, "higher")
    assert expected.tolist() == [False, True, True, False]
    assert prior["accuracy"] == 0.75 and prior["answer"] == "Yes/No:1/2"


def test_the_equal_error_rate_by_hand():
    # P: 0.9, 0.7, 0.4; N: 0.8, 0.3, 0.1. At t=0.7: FAR 1/3, FRR 1/3 -> EER 1/3.
    eer, threshold = equal_error_rate([0.9, 0.7, 0.4, 0.8, 0.3, 0.1], [1, 1, 1, 0, 0, 0], "higher")
    assert eer == pytest.approx(1 / 3) and threshold == 0.7


@pytest.mark.parametrize("direction", ["higher", "lower"])
def test_the_equal_error_rate_matches_sklearns_roc_curve(direction):
    rng = np.random.default_rng(3)
    labels = rng.random(200) < 0.4
    scores = np.round(rng.normal(size=200) + labels, 2)
    if direction == "lower":
        scores = -scores
    oriented = scores if direction == "higher" else -scores
    fpr, tpr, thresholds = roc_curve(labels, oriented, drop_intermediate=False)
    fnr = 1 - tpr
    i = np.argmin(np.abs(fnr - fpr))
    eer, threshold = equal_error_rate(scores, labels, direction)
    assert eer == pytest.approx((fpr[i] + fnr[i]) / 2)
    assert threshold == pytest.approx(thresholds[i] if direction == "higher" else -thresholds[i])


def test_the_equal_error_rate_is_undefined_with_one_class():
    eer, threshold = equal_error_rate([0.1, 0.2], [1, 1], "higher")
    assert np.isnan(eer) and np.isnan(threshold)


def test_the_rank_curve_predicts_the_top_k_pairs():
    frame = pd.DataFrame({"corpus": "C", "paraphrase": pd.array([1, 0, 1], dtype="Int64"), "m": [0.9, 0.5, 0.1]})
    ranks = threshold_tables(frame, ["m"], {"m": "higher"})["curves_rank"]
    global_rows = ranks[ranks["corpus"] == "Global"]
    assert global_rows["rank"].tolist() == [1, 2, 3]
    assert global_rows["accuracy"].tolist() == pytest.approx([2 / 3, 1 / 3, 2 / 3])
    assert global_rows["recall"].tolist() == pytest.approx([0.5, 0.5, 1.0])


def corpus_frame(sizes, seed=0):
    """Frame of corpora: {name: (n_paraphrase, n_non_paraphrase)}, metric m informative, d a distance."""
    rng = np.random.default_rng(seed)
    parts = []
    for name, (n_p, n_n) in sizes.items():
        labels = np.r_[np.ones(n_p), np.zeros(n_n)]
        m = labels + rng.normal(size=len(labels))
        parts.append(
            pd.DataFrame(
                {
                    "corpus": name,
                    "paraphrase": pd.array(labels.astype(int), dtype="Int64"),
                    "m": m,
                    "parapluie_fs_direct": 5 * m - 2,
                    "d": -m,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


DIRECTIONS = {"m": "higher", "parapluie_fs_direct": "higher", "d": "lower"}


def test_table3_has_a_global_row_and_parapluies_a_priori_row():
    frame = corpus_frame({"A": (30, 20), "B": (10, 25)})
    table = threshold_tables(frame, list(DIRECTIONS), DIRECTIONS)["table3"]
    assert set(table["corpus"]) == {"A", "B", "Global"}
    assert set(table.loc[table["metric"] == "parapluie_fs_direct", "threshold_kind"]) == {"a_posteriori", "a_priori"}
    assert set(table.loc[table["metric"] == "m", "threshold_kind"]) == {"a_posteriori"}
    # a distance is the negated score: same accuracy, negated threshold
    m = table[(table["metric"] == "m")].set_index("corpus")
    d = table[(table["metric"] == "d")].set_index("corpus")
    assert d["accuracy"].tolist() == pytest.approx(m["accuracy"].tolist())
    assert d["threshold"].tolist() == pytest.approx((-m["threshold"]).tolist())


def test_the_a_priori_rows_come_from_the_registry_not_from_the_name(monkeypatch):
    """A registered metric with a natural threshold gets a-priori rows at it (MBD too); a look-alike name without
    an entry gets none: the registry decides, never a prefix."""
    toy = Entry("tests.toy.Margin", HIGHER, "Toy margin", natural_threshold=0.5)
    monkeypatch.setitem(registry.METRICS, "toy_margin", toy)
    frame = corpus_frame({"A": (30, 20), "B": (10, 25)}).rename(columns={"parapluie_fs_direct": "parapluie_lookalike"})
    frame["toy_margin"] = frame["m"]
    directions = {"toy_margin": "higher", "parapluie_lookalike": "higher"}
    table = threshold_tables(frame, list(directions), directions)["table3"]
    mbd, _ = mixed_balanced(frame, list(directions), directions, n_draws=5, seed=1)
    for found in (table, mbd):
        kinds = found.groupby("metric")["threshold_kind"].agg(set).to_dict()
        assert kinds == {"toy_margin": {"a_posteriori", "a_priori"}, "parapluie_lookalike": {"a_posteriori"}}
        assert (found.loc[found["threshold_kind"] == "a_priori", "threshold"] == 0.5).all()
    prior = table[(table["threshold_kind"] == "a_priori") & (table["corpus"] == "Global")].iloc[0]
    expected = at_threshold(frame["m"], frame["paraphrase"].astype(int), "higher", 0.5)
    assert prior["accuracy"] == expected["accuracy"]


def test_best_rows_matches_the_one_dimensional_scan():
    rng = np.random.default_rng(5)
    oriented = np.round(rng.normal(size=(20, 30)), 1)
    labels = rng.random((20, 30)) < 0.5
    rows = best_rows(oriented, labels)
    for i in range(20):
        one = best_threshold(scan_thresholds(oriented[i], labels[i], "higher"))
        assert rows["threshold"][i] == one["threshold"] and rows["accuracy"][i] == pytest.approx(one["accuracy"])
        assert rows["f1"][i] == pytest.approx(one["f1"])


def test_balanced_draws_take_45_per_label_and_corpus_without_replacement():
    corpus = np.array(["A"] * 100 + ["B"] * 60)
    labels = np.r_[np.ones(50), np.zeros(50), np.ones(10), np.zeros(50)].astype(bool)
    draws = draw_balanced(corpus, labels, per_label=45, n_draws=7, seed=1)
    assert draws.shape == (7, 45 + 45 + 10 + 45)
    for row in draws:
        assert len(set(row)) == len(row)
        assert labels[row[corpus[row] == "A"]].sum() == 45 and labels[row[corpus[row] == "B"]].sum() == 10
    assert (draw_balanced(corpus, labels, per_label=45, n_draws=7, seed=1) == draws).all()
    assert not (draw_balanced(corpus, labels, per_label=45, n_draws=7, seed=2) == draws).all()


def test_the_mbd_is_reproducible_and_notes_short_corpora():
    frame = corpus_frame({"A": (80, 60), "B": (50, 12)})
    first, notes = mixed_balanced(frame, list(DIRECTIONS), DIRECTIONS, seed=7)
    again, _ = mixed_balanced(frame, list(DIRECTIONS), DIRECTIONS, seed=7)
    pd.testing.assert_frame_equal(first, again)
    assert notes == ["MBD: corpus B has 12 labelled non-paraphrase pair(s), fewer than 45; each draw uses all 12."]
    row = first[(first["metric"] == "m")].iloc[0]
    assert row["n"] == 45 + 45 + 45 + 12 and row["n_paraphrase"] == 90
    assert row["accuracy_ci95"] > 0


def test_the_mbd_mean_and_ci_match_a_loop_over_the_draws():
    frame = corpus_frame({"A": (60, 50), "B": (50, 70)})
    table, _ = mixed_balanced(frame, ["m"], DIRECTIONS, n_draws=20, seed=3)
    labels = frame["paraphrase"].to_numpy(dtype=int) == 1
    draws = draw_balanced(frame["corpus"].to_numpy(), labels, per_label=45, n_draws=20, seed=3)
    accuracies = [
        best_threshold(scan_thresholds(frame["m"].to_numpy()[d], labels[d], "higher"))["accuracy"] for d in draws
    ]
    assert table.loc[0, "accuracy"] == pytest.approx(np.mean(accuracies))
    assert table.loc[0, "accuracy_ci95"] == pytest.approx(1.96 * np.std(accuracies, ddof=1) / np.sqrt(20))


@pytest.mark.parametrize("seed", range(6))
def test_closest_first_is_the_stable_descending_sort(seed):
    rng = np.random.default_rng(seed)
    n = 500
    scores = [rng.normal(size=n), rng.integers(-2, 3, n) * 0.0, np.round(rng.normal(size=n), 1)][seed % 3]
    if seed >= 3:  # NaN and infinities, which a stable sort puts in input order at their ends
        scores[rng.random(n) < 0.1] = np.nan
        scores[rng.random(n) < 0.1] = -np.inf
    assert np.array_equal(closest_first(scores), np.argsort(-scores, kind="stable"))
    assert len(closest_first(np.empty(0))) == 0


def test_the_balanced_draws_are_those_of_one_array_of_keys_drawn_at_once():
    """Drawn draw by draw (to bound memory), the positions equal those of one (draws x group) array of keys."""
    from reports.analysis.classification import draw_balanced

    rng = np.random.default_rng(3)
    corpus, labels = rng.choice(["a", "b"], 2_000), rng.random(2_000) < 0.4
    expected_rng = np.random.default_rng(11)
    blocks = []
    for name in dict.fromkeys(corpus):
        for value in (True, False):
            group = np.flatnonzero((corpus == name) & (labels == value))
            keys = expected_rng.random((30, len(group)))
            blocks.append(group[np.argpartition(keys, 44, axis=1)[:, :45]])
    expected = np.concatenate(blocks, axis=1)
    assert np.array_equal(draw_balanced(corpus, labels, per_label=45, n_draws=30, seed=11), expected)


@pytest.mark.parametrize("seed", range(6))
def test_a_corpus_sorted_from_the_sort_of_every_corpus_is_the_corpus_sorted(seed):
    """`suborder`: the classification, AUC and rank-correlation steps sort each metric once, not once per corpus.
    From a stable sort it is exactly the subset's own stable sort; from a fast unstable one, a sort of the subset."""
    rng = np.random.default_rng(seed)
    n = 600
    scores = [rng.normal(size=n), rng.integers(-2, 3, n) * 1.0, np.round(rng.normal(size=n), 1)][seed % 3]
    if seed >= 3:  # unscored pairs, which a corpus's rows then leave out
        scores[rng.random(n) < 0.1] = np.nan
    corpus = rng.integers(0, 3, n)
    for keep in [corpus == 1, (corpus == 2) & ~np.isnan(scores), ~np.isnan(scores), np.zeros(n, dtype=bool)]:
        subset = scores[keep]
        assert np.array_equal(suborder(closest_first(scores), keep), closest_first(subset))
        assert np.array_equal(suborder(np.argsort(scores, kind="stable"), keep), np.argsort(subset, kind="stable"))
        from_unstable = suborder(np.argsort(scores), keep)
        assert sorted(from_unstable) == list(range(len(subset)))  # each of the subset's pairs once
        assert np.array_equal(subset[from_unstable], np.sort(subset), equal_nan=True)
