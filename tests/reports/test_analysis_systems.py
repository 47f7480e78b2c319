"""Systems table, pairwise comparison and system-level correlation against direct computations."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotation.tasktypes.similarity.scale import VOTE
from annotation.votes import with_votes
from reports.analysis.systems import (
    _correlation,
    draw_correlations,
    pairwise_systems,
    system_correlation,
    system_names,
    systems_table,
)

# Four systems paraphrase the same six sources. Labels (1 = paraphrase) were chosen so the
# systems rank A > B > C > D by the judges; metric `good` follows that order, `bad` reverses it.
LABELS = {
    "A": [1, 1, 1, 1, 1, 0],
    "B": [1, 1, 1, 0, 1, 0],
    "C": [1, 0, 0, 1, 0, 0],
    "D": [0, 0, 0, 0, 1, 0],
}
GOOD = {"A": 0.9, "B": 0.7, "C": 0.5, "D": 0.2}
BAD = {"A": 0.1, "B": 0.4, "C": 0.3, "D": 0.8}


def fixture():
    rows = []
    for system, labels in LABELS.items():
        for index, label in enumerate(labels):
            rows.append(
                {
                    "pair_id": f"{system}{index}",
                    "source": f"s{index}",
                    "system": system,
                    "paraphrase": label,
                    "good": GOOD[system] + 0.01 * index,
                    "bad": BAD[system] - 0.01 * index,
                }
            )
    frame = pd.DataFrame(rows)
    frame["paraphrase"] = pd.array(frame["paraphrase"], dtype="Int64")
    judgments = with_votes(
        pd.DataFrame(
            [
                {"pair_id": "A0", "answer": "same_meaning"},
                {"pair_id": "A0", "answer": "mostly_similar"},
                {"pair_id": "A1", "answer": "dont_know"},
                {"pair_id": "D0", "answer": "very_different"},
            ]
        ),
        VOTE,
    )
    return frame, judgments


def test_it_tabulates_each_system_against_a_direct_count():
    frame, judgments = fixture()
    table = systems_table(frame, judgments, ["good"], n_bootstrap=200).set_index("system")
    for system, labels in LABELS.items():
        assert table.loc[system, "paraphrase_rate"] == pytest.approx(np.mean(labels))
        assert table.loc[system, "n_pairs"] == 6 and table.loc[system, "n_labelled"] == 6
        assert table.loc[system, "ci_low"] <= np.mean(labels) <= table.loc[system, "ci_high"]
    assert table.loc["A", "mean_ordinal"] == pytest.approx((4 + 3) / 2)
    assert table.loc["A", "share_dont_know"] == pytest.approx(1 / 3)
    assert table.loc["D", "mean_ordinal"] == pytest.approx(1.0)
    assert table.loc["B", "good"] == pytest.approx(np.mean([0.7 + 0.01 * i for i in range(6)]))
    assert list(table.index) == ["A", "B", "C", "D"]


def test_its_interval_collapses_when_every_source_agrees_and_repeats_with_a_seed():
    frame, judgments = fixture()
    frame.loc[frame["system"] == "A", "paraphrase"] = 1
    first = systems_table(frame, judgments, [], n_bootstrap=100, seed=3).set_index("system")
    second = systems_table(frame, judgments, [], n_bootstrap=100, seed=3).set_index("system")
    assert (first.loc["A", "ci_low"], first.loc["A", "ci_high"]) == (1.0, 1.0)
    pd.testing.assert_frame_equal(first, second)


def test_it_compares_systems_on_shared_sources_like_scipy():
    frame, _ = fixture()
    table = pairwise_systems(frame, n_bootstrap=500).set_index(["system_a", "system_b"])
    difference = np.array(LABELS["A"]) - np.array(LABELS["D"])
    row = table.loc[("A", "D")]
    assert row["n_sources"] == 6
    assert row["mean_difference"] == pytest.approx(difference.mean())
    assert (row["n_a_better"], row["n_b_better"]) == (4, 0)
    assert row["p_sign"] == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue)
    assert 0 <= row["p_bootstrap"] < 0.2
    assert len(table) == 6


def test_it_correlates_system_means_with_the_paraphrase_rate_like_scipy():
    frame, _ = fixture()
    frame["distance"] = 1 - frame["good"]  # a distance: lower means closer, so it is negated before correlating
    directions = {"good": "higher", "bad": "higher", "distance": "lower"}
    metrics = ["good", "bad", "distance"]
    table = system_correlation(frame, metrics, directions, n_bootstrap=200).set_index("metric")
    rate = frame.assign(paraphrase=frame["paraphrase"].astype(float)).groupby("system")["paraphrase"].mean()
    for metric, sign in (("good", 1), ("bad", 1), ("distance", -1)):
        means = sign * frame.groupby("system")[metric].mean()
        assert table.loc[metric, "pearson"] == pytest.approx(stats.pearsonr(rate, means)[0])
        assert table.loc[metric, "spearman"] == pytest.approx(stats.spearmanr(rate, means)[0])
        assert table.loc[metric, "kendall"] == pytest.approx(stats.kendalltau(rate, means)[0])
        assert table.loc[metric, "n_systems"] == 4 and table.loc[metric, "meaningful"]
    assert table.loc["good", "spearman"] == pytest.approx(1.0)
    assert table.loc["distance", "spearman"] == pytest.approx(1.0)
    assert table.loc["bad", "spearman"] < 0
    assert table.loc["good", "pearson_ci_low"] <= table.loc["good", "pearson"] <= table.loc["good", "pearson_ci_high"]


def test_it_flags_correlations_over_fewer_than_four_systems():
    frame, _ = fixture()
    frame = frame[frame["system"] != "D"]
    table = system_correlation(frame, ["good"], {"good": "higher"}, n_bootstrap=50)
    assert not table.loc[0, "meaningful"] and table.loc[0, "n_systems"] == 3


def test_it_names_systems_from_the_system_column_or_generator_and_template():
    generated = pd.DataFrame({"generator": ["smollm2", "smollm2", ""], "template": ["naive", "fs", ""]})
    assert list(system_names(generated)) == ["smollm2 / naive", "smollm2 / fs", ""]
    imported = pd.DataFrame({"system": ["human1", "machine1"], "generator": ["x", "y"]})
    assert list(system_names(imported)) == ["human1", "machine1"]
    assert list(system_names(imported, keys=["generator"])) == ["x", "y"]


def test_it_averages_the_metric_over_the_same_pairs_as_the_judges():
    # Four systems, two labelled pairs each (labels 1,1 / 1,0 / 0,0 / 1,0 → rates 1, 0.5, 0, 0.5)
    # whose scores follow the rate, plus one unlabelled pair per system scored far off. Over the
    # labelled pairs only, the metric means are 0.9, 0.5, 0.1, 0.5: Pearson 1 with the rates.
    rows = []
    for system, labels, scores, stray in (
        ("A", [1, 1], [0.9, 0.9], 0.0),
        ("B", [1, 0], [0.6, 0.4], 1.0),
        ("C", [0, 0], [0.1, 0.1], 2.0),
        ("D", [1, 0], [0.5, 0.5], 0.0),
    ):
        for n, (label, score) in enumerate(zip(labels, scores)):
            rows.append(
                {"pair_id": f"{system}{n}", "source": f"s{n}", "system": system, "paraphrase": label, "m": score}
            )
        rows.append({"pair_id": f"{system}u", "source": "s9", "system": system, "paraphrase": None, "m": stray})
    frame = pd.DataFrame(rows)
    table = system_correlation(frame, ["m"], {"m": "higher"}, n_bootstrap=20)
    assert table.loc[0, "pearson"] == pytest.approx(1.0)
    # Averaging over every pair (the unlabelled ones too) gives 0.6, 0.667, 0.733, 0.333: Pearson below 0.
    everything = frame.groupby("system")["m"].mean()
    rates = frame.dropna(subset=["paraphrase"]).groupby("system")["paraphrase"].mean()
    assert stats.pearsonr(rates, everything)[0] < 0


def test_it_correlates_with_any_human_column_such_as_mean_overall():
    frame, _ = fixture()
    frame["overall"] = frame["paraphrase"].astype(float) * 4 + 1
    table = system_correlation(frame, ["good"], {"good": "higher"}, n_bootstrap=20, human="overall")
    reference = system_correlation(frame, ["good"], {"good": "higher"}, n_bootstrap=20)
    assert table.loc[0, "pearson"] == pytest.approx(reference.loc[0, "pearson"])


def test_it_caps_pairwise_comparisons_at_the_most_labelled_systems_with_a_note():
    from reports.analysis.systems import system_comparisons, system_report

    # System s<k> has k+1 labelled pairs (k = 0..9), all on two shared sources.
    rows = [
        {"pair_id": f"{k}-{i}", "source": f"src{i % 2}", "system": f"s{k}", "paraphrase": float(i % 2)}
        for k in range(10)
        for i in range(k + 1 if k else 2)
    ]
    frame = pd.DataFrame(rows)
    judgments = with_votes(pd.DataFrame(columns=["pair_id", "answer"]), VOTE)
    tables, notes = system_comparisons(frame, [], {}, n_bootstrap=20, max_comparisons=10)
    compared = set(tables["system_pairwise"][["system_a", "system_b"]].to_numpy().ravel())
    assert len(tables["system_pairwise"]) == 10 and compared == {"s5", "s6", "s7", "s8", "s9"}
    assert len(system_report(frame, judgments, [], n_bootstrap=20)) == 10  # every system still has its row
    assert any("cover the 5 systems with the most labelled pairs" in note for note in notes)
    uncapped, notes = system_comparisons(frame, [], {}, n_bootstrap=20)
    assert len(uncapped["system_pairwise"]) == 45 and not any("cover the" in note for note in notes)


@pytest.mark.parametrize("keys", [["generator", "template"], ["template"], ["generator", "template", "generator"]])
def test_system_names_join_the_filled_keys_as_a_row_by_row_join_would(keys):
    import random

    rng = random.Random(7)
    pairs = pd.DataFrame(
        {
            "generator": [rng.choice([None, "", "g1", "g/2", np.nan]) for _ in range(300)],
            "template": [rng.choice([None, "", "t1", 3]) for _ in range(300)],
        },
        index=range(5, 305),
    )
    expected = pairs[keys].fillna("").astype(str).apply(lambda row: " / ".join(v for v in row if v), axis=1)
    assert system_names(pairs, keys).tolist() == expected.tolist()


@pytest.mark.parametrize("function", ["pearsonr", "spearmanr", "kendalltau"])
def test_the_batched_draw_correlations_are_scipys_row_by_row_bit_for_bit(function):
    # Draws x systems with ties, constant rows and systems missing from some draws (NaN), as bootstrap draws have.
    rng = np.random.default_rng(5)
    x, y = rng.random((400, 7)), rng.random((400, 7))
    x[::5] = np.round(x[::5] * 3) / 3
    y[1::9] = 0.5
    x[rng.random(x.shape) < 0.05] = np.nan
    y[2::11, :5] = np.nan  # rows with only two systems on both sides: no correlation
    expected = []
    for row_x, row_y in zip(x, y):
        keep = ~(np.isnan(row_x) | np.isnan(row_y))
        expected.append(_correlation(function, row_x[keep], row_y[keep]))
    batched = draw_correlations(function, x, y)
    assert np.array_equal(batched, np.array(expected), equal_nan=True)
    assert np.isnan(batched).any() and not np.isnan(batched).all()
