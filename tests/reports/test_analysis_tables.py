import numpy as np
import pandas as pd
import pytest
from rapidfuzz.distance import Levenshtein
from scipy import stats

from reports.analysis.tables import edit_distances, pearson, table1, table4


def frame_of(seed=0, n=80):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.5).astype(int)
    distance = rng.random(n)
    return pd.DataFrame(
        {
            "corpus": np.where(np.arange(n) < n // 2, "A", "B"),
            "paraphrase": pd.array(labels, dtype="Int64"),
            "edit_distance": distance,
            "m": labels - distance + rng.normal(0, 0.2, n),
            "flat": 1.0,
        }
    )


def test_edit_distances_are_rapidfuzz_normalised_levenshtein():
    sources = ["the cat sat", "", "abc"]
    hypotheses = ["the cat sat down", "", "xyz"]
    expected = [Levenshtein.normalized_distance(s, h) for s, h in zip(sources, hypotheses)]
    assert edit_distances(sources, hypotheses).tolist() == pytest.approx(expected)


def test_table1_is_the_mean_and_sample_std_per_corpus_and_label():
    frame = frame_of()
    frame.loc[3, "m"] = np.nan  # not scored yet
    table = table1(frame, ["m"], {"m": "higher"}).set_index(["corpus", "label"])
    for corpus, rows in [("A", frame[frame["corpus"] == "A"]), ("B", frame[frame["corpus"] == "B"]), ("Global", frame)]:
        for value, name in ((1, "paraphrase"), (0, "non_paraphrase")):
            values = rows.loc[rows["paraphrase"] == value, "m"].dropna().to_numpy()
            assert table.loc[(corpus, name), "mean"] == pytest.approx(np.mean(values))
            assert table.loc[(corpus, name), "std"] == pytest.approx(np.std(values, ddof=1))
            assert table.loc[(corpus, name), "n"] == len(values)


def test_pearson_matches_scipy():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=30), rng.normal(size=30)
    y = y + x
    expected = stats.pearsonr(x, y)
    assert pearson(x, y) == pytest.approx((expected.statistic, expected.pvalue))


def test_table4_correlates_inside_each_class_and_notes_constant_scores():
    frame = frame_of()
    table, notes = table4(frame, ["m", "flat"])
    rows = table.set_index(["metric", "corpus", "label"])
    part = frame[(frame["corpus"] == "B") & (frame["paraphrase"] == 0)]
    assert rows.loc[("m", "B", "non_paraphrase"), "pearson_r"] == pytest.approx(
        stats.pearsonr(part["m"], part["edit_distance"]).statistic
    )
    assert np.isnan(rows.loc[("flat", "Global", "paraphrase"), "pearson_r"])
    assert any(note.startswith("flat gives one constant score") for note in notes)
