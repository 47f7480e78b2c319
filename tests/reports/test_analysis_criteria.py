"""PEM's tables checked against direct scipy/krippendorff computations on a seeded fixture."""

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from reports.analysis.criteria import (
    CRITERIA,
    alpha_per_criterion,
    criteria_by_system,
    criteria_vs_overall,
    inter_judge_correlation,
    metrics_vs_criteria,
    pem_fit,
)

SYSTEMS, SOURCES, JUDGES = ["human1", "human2", "machine1", "machine2"], 8, ["j1", "j2", "j3"]


def fixture():
    """Three judges rate 4 systems x 8 sources; a system's quality shifts every criterion."""
    rng = np.random.default_rng(7)
    pairs, judgments = [], []
    for rank, system in enumerate(SYSTEMS):
        for source in range(SOURCES):
            pair_id = f"{system}-{source}"
            quality = 4.5 - rank + rng.normal(0, 0.5)
            pairs.append({"pair_id": pair_id, "system": system, "good": quality + rng.normal(0, 0.3)})
            for judge in JUDGES:
                ratings = {c: float(np.clip(round(quality + rng.normal(0, 0.7)), 1, 5)) for c in CRITERIA}
                judgments.append({"pair_id": pair_id, "judge": judge, **ratings})
    return pd.DataFrame(judgments), pd.DataFrame(pairs)


def test_it_gives_mean_and_std_by_system():
    judgments, pairs = fixture()
    table = criteria_by_system(judgments, pairs).set_index(["system", "criterion"])
    ratings = judgments[judgments["pair_id"].str.startswith("machine1")]["fluency"]
    assert table.loc[("machine1", "fluency"), "mean"] == pytest.approx(ratings.mean())
    assert table.loc[("machine1", "fluency"), "std"] == pytest.approx(np.std(ratings, ddof=1))
    assert table.loc[("machine1", "fluency"), "n"] == SOURCES * len(JUDGES)


def test_it_correlates_judges_at_sentence_and_system_level_like_scipy():
    judgments, pairs = fixture()
    table = inter_judge_correlation(judgments, pairs).set_index(["judge_a", "judge_b"])
    a = judgments[judgments["judge"] == "j1"].set_index("pair_id")["overall"]
    c = judgments[judgments["judge"] == "j3"].set_index("pair_id")["overall"]
    assert table.loc[("j1", "j3"), "sentence_level"] == pytest.approx(stats.pearsonr(a, c.loc[a.index])[0])
    system_of = pairs.set_index("pair_id")["system"]
    a_sys, c_sys = a.groupby(system_of).mean(), c.groupby(system_of).mean()
    assert table.loc[("j1", "j3"), "system_level"] == pytest.approx(stats.pearsonr(a_sys, c_sys[a_sys.index])[0])
    assert len(table) == 3


def test_it_correlates_criteria_with_overall_including_the_high_quality_subset():
    judgments, pairs = fixture()
    table = criteria_vs_overall(judgments, pairs).set_index("row")
    means = judgments.groupby("pair_id")[CRITERIA].mean()
    assert table.loc["adequacy", "sentence_level"] == pytest.approx(
        stats.pearsonr(means["adequacy"], means["overall"])[0]
    )
    high = means[(means["adequacy"] >= 4) & (means["fluency"] >= 4)]
    row = table.loc["dissimilarity (adequacy, fluency ≥ 4)"]
    assert row["n_pairs"] == len(high)
    assert row["sentence_level"] == pytest.approx(stats.pearsonr(high["dissimilarity"], high["overall"])[0])


def test_it_correlates_metrics_with_overall_and_adequacy():
    judgments, pairs = fixture()
    table = metrics_vs_criteria(judgments, pairs, ["good"], {"good": "higher"}).set_index(["metric", "criterion"])
    means = judgments.groupby("pair_id")["overall"].mean()
    good = pairs.set_index("pair_id")["good"].loc[means.index]
    assert table.loc[("good", "overall"), "sentence_level"] == pytest.approx(stats.pearsonr(good, means)[0])
    system_of = pairs.set_index("pair_id")["system"]
    expected = stats.pearsonr(good.groupby(system_of).mean(), means.groupby(system_of).mean())[0]
    assert table.loc[("good", "overall"), "system_level"] == pytest.approx(expected)


def test_it_computes_interval_alpha_per_criterion_like_krippendorff():
    judgments, _ = fixture()
    table = alpha_per_criterion(judgments).set_index("criterion")
    matrix = judgments.pivot_table(index="judge", columns="pair_id", values="adequacy").to_numpy()
    expected = krippendorff.alpha(matrix, level_of_measurement="interval")
    assert table.loc["adequacy", "alpha_interval"] == pytest.approx(expected)


def test_its_cross_validated_fit_tracks_overall_and_refuses_tiny_data():
    judgments, pairs = fixture()
    fit = pem_fit(judgments, pairs, ["good"], folds=4)
    assert fit["n_pairs"] == len(SYSTEMS) * SOURCES and fit["sentence_level"] > 0.5
    tiny = pem_fit(judgments, pairs.head(5), ["good"], folds=4)
    assert np.isnan(tiny["sentence_level"])
