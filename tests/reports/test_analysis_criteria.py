"""PEM's tables checked against direct scipy/krippendorff computations on a seeded fixture."""

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from annotation.tasktypes.criteria.scale import PEM_CONTROLS
from reports.analysis.criteria import (
    CRITERIA,
    alpha_per_criterion,
    criteria_by_system,
    criteria_system_correlation,
    criteria_vs_overall,
    fit_pem_model,
    human_reference,
    inter_judge_correlation,
    metrics_vs_criteria,
    pem_fit,
    pem_vs_judges,
    source_split,
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
            pairs.append(
                {"pair_id": pair_id, "source": f"s{source}", "system": system, "good": quality + rng.normal(0, 0.3)}
            )
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


def controls_for(pairs):
    """PEM's three fixed-score controls for every source of `pairs`, scored by `good` as a metric would."""
    rows = []
    for source in sorted(pairs["source"].unique()):
        for kind, good in (("pem-source", 5.0), ("pem-random", 0.5), ("pem-unigram", 0.0)):
            rows.append(
                {"pair_id": f"{kind}-{source}", "source": source, "system": f"control {kind}", "good": good}
                | PEM_CONTROLS[kind]
            )
    return pd.DataFrame(rows)


def test_the_human_reference_adds_the_controls_with_their_fixed_ratings():
    judgments, pairs = fixture()
    controls = controls_for(pairs)
    reference = human_reference(judgments, pairs, controls)
    assert len(reference) == len(pairs) + 3 * SOURCES
    assert reference.loc["pem-source-s0", ["adequacy", "fluency", "dissimilarity", "overall"]].tolist() == [5, 5, 1, 2]
    assert reference.loc["pem-unigram-s3", "overall"] == 1
    assert len(human_reference(judgments, pairs, None)) == len(pairs)


def test_table_2_takes_the_controls_into_the_reference_and_can_leave_them_out():
    judgments, pairs = fixture()
    controls = controls_for(pairs)
    with_controls = criteria_vs_overall(judgments, pairs, controls).set_index("row")
    means = pd.concat([judgments.groupby("pair_id")[CRITERIA].mean(), controls.set_index("pair_id")[CRITERIA]])
    expected = stats.pearsonr(means["fluency"], means["overall"])[0]
    assert with_controls.loc["fluency", "sentence_level"] == pytest.approx(expected)
    assert with_controls.loc["fluency", "n_systems"] == len(SYSTEMS) + 3
    without = criteria_vs_overall(judgments, pairs).set_index("row")
    assert without.loc["fluency", "n_systems"] == len(SYSTEMS)


def test_system_level_metric_correlation_uses_mean_overall_with_controls():
    judgments, pairs = fixture()
    controls = controls_for(pairs)
    table = criteria_system_correlation(judgments, pairs, ["good"], {"good": "higher"}, controls, n_bootstrap=20)
    row = table.set_index(["metric", "criterion"]).loc[("good", "overall")]
    reference = human_reference(judgments, pairs, controls)
    systems = reference.groupby("system")[["good", "overall"]].mean()
    assert row["pearson"] == pytest.approx(stats.pearsonr(systems["good"], systems["overall"])[0])
    assert row["n_systems"] == 7  # PEM's seven systems: four judged, three controls


def test_folds_never_split_a_source_and_the_paper_split_trains_on_the_first_two_thirds():
    sources = pd.Series([f"s{i // 7}" for i in range(7 * 300)])  # 300 sources x 7 systems, as in PEM
    for train, test in source_split(sources, "sources", folds=5):
        assert not set(sources.iloc[train]) & set(sources.iloc[test])
    [(train, test)] = source_split(sources, "paper")
    assert (len(train), len(test)) == (1400, 700)  # PEM 6.1: 1,400 training and 700 test instances
    assert set(sources.iloc[train]) == {f"s{i}" for i in range(200)}
    with pytest.raises(ValueError, match="split must be one of"):
        source_split(sources, "pairs")


def test_the_held_out_fit_reports_its_split_and_works_with_the_papers():
    judgments, pairs = fixture()
    controls = controls_for(pairs)
    grouped = pem_fit(judgments, pairs, ["good"], folds=4, controls=controls)
    assert grouped["split"] == "sources" and grouped["n_test_pairs"] == grouped["n_pairs"] == 4 * SOURCES + 3 * SOURCES
    assert grouped["sentence_level"] > 0.5
    paper = pem_fit(judgments, pairs, ["good"], split="paper", controls=controls)
    assert paper["n_test_pairs"] == 7 * (SOURCES - round(SOURCES * 2 / 3))


def test_pem_against_each_judge_leaves_the_controls_out():
    judgments, pairs = fixture()
    table = pem_vs_judges(judgments, pairs, ["good"], folds=4, controls=controls_for(pairs)).set_index("reference")
    assert table.loc["human mean", "n_pairs"] == 7 * SOURCES
    assert table.loc["judge j1", "n_pairs"] == 4 * SOURCES and table.loc["judge j1", "n_systems"] == 4


def test_the_stored_model_of_the_papers_split_is_fitted_on_the_training_sources():
    judgments, pairs = fixture()
    params, evaluation = fit_pem_model(judgments, pairs, ["good"], split="paper")
    assert evaluation["n_train_pairs"] == 4 * round(SOURCES * 2 / 3)
    assert len(params["support_vectors"]) <= evaluation["n_train_pairs"]
    with pytest.raises(ValueError, match="too little data"):
        fit_pem_model(judgments, pairs.head(5), ["good"])
