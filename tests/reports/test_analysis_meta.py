"""The meta-evaluation (`reports.analysis.meta`, `resampling`, the crowd-aware labels): every number against an
independent computation (scipy, scikit-learn, statsmodels, crowd-kit called directly, or a case worked by hand)."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, brier_score_loss, cohen_kappa_score, roc_auc_score
from statsmodels.stats.multitest import multipletests

from annotation.tasktypes.similarity.scale import VOTE
from annotation.votes import with_votes
from reports.analysis import build_report, meta, resampling
from reports.analysis.labels import crowd_labels, judge_competence, judge_votes
from tests.reports.test_analysis_report import DIRECTIONS, FAST, data

META_TABLES = (
    "system_accuracy",
    "metric_clusters",
    "metric_tests",
    "within_source",
    "human_ceiling",
    "calibration",
    "reliability",
    "judge_competence",
)


def weights_of(n, k, seed=3):
    rng = np.random.default_rng(seed)
    return np.column_stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(k)]).astype(np.int32)


def expanded(w):
    return np.repeat(np.arange(len(w)), w)


def test_the_resampled_kernels_equal_scipy_and_sklearn_on_the_expanded_samples():
    rng = np.random.default_rng(1)
    n = 50
    scores = np.round(rng.normal(size=n), 1)  # ties on purpose
    target = rng.integers(1, 5, size=n) / 1.0
    labels = target > 2
    weights = weights_of(n, 6)
    ranks = resampling.target_ranks(target)
    spearman = resampling.Spearman(scores, ranks)(weights)
    kendall = resampling.Kendall(scores, ranks)(weights)
    auc = resampling.auc(scores, labels)(weights)
    for column in range(weights.shape[1]):
        rows = expanded(weights[:, column])
        assert spearman[column] == pytest.approx(stats.spearmanr(scores[rows], target[rows])[0], abs=1e-12)
        assert kendall[column] == pytest.approx(stats.kendalltau(scores[rows], target[rows])[0], abs=1e-12)
        assert auc[column] == pytest.approx(roc_auc_score(labels[rows], scores[rows]), abs=1e-12)


@pytest.mark.parametrize("matrix_max_pairs", [resampling.MATRIX_MAX_PAIRS, 0])
def test_kendalls_two_ways_of_counting_equal_scipy_on_the_expanded_samples(monkeypatch, matrix_max_pairs):
    """The matrix product (small samples) and the level-by-level count (above MATRIX_MAX_PAIRS), ties and
    unscored pairs (weight 0) included."""
    monkeypatch.setattr(resampling, "MATRIX_MAX_PAIRS", matrix_max_pairs)
    rng = np.random.default_rng(11)
    for n, n_levels in ((40, 2), (120, 7), (300, 10)):
        scores = np.round(rng.normal(size=n), 1)
        target = rng.integers(0, n_levels, size=n) / 2.0
        weights = weights_of(n, 5, seed=n) * (rng.random(n) < 0.9)[:, None].astype(np.int32)
        kendall = resampling.Kendall(scores, resampling.target_ranks(target))(weights)
        for column in range(weights.shape[1]):
            rows = expanded(weights[:, column])
            assert kendall[column] == pytest.approx(stats.kendalltau(scores[rows], target[rows])[0], abs=1e-12)


def test_the_calibration_kernel_equals_sklearn_on_the_expanded_samples():
    rng = np.random.default_rng(12)
    n = 200
    y = rng.random(n) < 0.4
    p = np.round(1 / (1 + np.exp(-(2 * y - 1 + rng.normal(size=n)))), 2)  # ties on purpose
    weights = weights_of(n, 6, seed=4)
    brier, ece, pr_auc = meta._CalibrationKernel(p, y.astype(float), meta._bins(p))(weights)
    for column in range(weights.shape[1]):
        rows = expanded(weights[:, column])
        assert brier[column] == pytest.approx(brier_score_loss(y[rows], p[rows]), abs=1e-12)
        assert pr_auc[column] == pytest.approx(average_precision_score(y[rows], p[rows]), abs=1e-12)
        bins = meta._bins(p[rows])
        expected = sum(
            abs(p[rows][bins == b].sum() - y[rows][bins == b].sum()) for b in range(meta.N_BINS) if (bins == b).any()
        )
        assert ece[column] == pytest.approx(expected / len(rows), abs=1e-12)


def test_sources_are_coded_as_pandas_codes_them_and_lone_candidates_left_out():
    rng = np.random.default_rng(13)
    names = pd.Series(rng.choice(["a", "b", "c", "d", "e", None], size=200))
    codes = pd.factorize(names)[0]
    with_two = meta._with_two_candidates(codes)
    sizes = names.to_frame("source").groupby("source", sort=False)["source"].transform("size")
    assert np.array_equal(with_two, (sizes >= 2).to_numpy())
    kept = codes[with_two][::3]
    # within_source codes the kept sources' integer codes again: the same codes as the strings would get.
    assert np.array_equal(pd.factorize(kept)[0], pd.factorize(names[with_two].iloc[::3])[0])
    assert not meta._with_two_candidates(np.array([0, 1, -1, -1])).any()


def test_source_resampling_gives_every_candidate_of_a_drawn_source_its_count():
    groups = np.array([0, 0, 1, 1, 1, 2])
    for weights in resampling.pair_weights(6, 40, seed=5, groups=groups):
        for column in weights.T:
            assert column[0] == column[1] and column[2] == column[3] == column[4]
            assert column[[0, 2, 5]].sum() == 3  # three sources drawn, with replacement


@pytest.mark.parametrize("correction", ["holm", "bonferroni"])
def test_corrections_equal_statsmodels(correction):
    p = np.array([0.01, 0.04, 0.03, 0.20, 0.002, np.nan, 0.04])
    known = ~np.isnan(p)
    expected = multipletests(p[known], method=correction)[1]
    adjusted = meta.corrected(p, correction)
    assert np.allclose(adjusted[known], expected) and np.isnan(adjusted[~known])
    assert np.array_equal(meta.corrected(p, "none")[known], p[known])


def test_clusters_run_until_a_metric_is_significantly_worse_than_the_clusters_first():
    values = {"a": 0.9, "b": 0.85, "c": 0.8, "d": 0.5, "e": np.nan}
    # a beats c and d; b beats d; c and d do not differ: WMT's greedy clusters are {a, b}, {c, d}.
    significant = {("a", "c"): True, ("a", "d"): True, ("b", "d"): True}
    placed = meta.clusters(values, significant)
    assert placed == {"a": (1, 1, 0), "b": (2, 1, 0), "c": (3, 2, 1), "d": (4, 2, 2)}


def systems_frame():
    """Four systems over 30 sources: judges rank A > B > C > D; the metric swaps C and D."""
    rng = np.random.default_rng(7)
    rows = []
    rates = {"A": 0.9, "B": 0.7, "C": 0.45, "D": 0.3}
    means = {"A": 3.0, "B": 2.0, "C": 0.5, "D": 1.0}
    for source in range(30):
        for system, rate in rates.items():
            rows.append(
                {
                    "source": f"s{source}",
                    "system": system,
                    "paraphrase": float(rng.random() < rate),
                    "m": means[system] + rng.normal(scale=0.3),
                }
            )
    return pd.DataFrame(rows)


def test_system_pairwise_accuracy_pearson_and_kendall_as_worked_by_hand_and_by_scipy():
    frame = systems_frame()
    table, draws = meta.system_level(frame, ["m"], {"m": "higher"}, n_resamples=200, seed=1)
    row = table.iloc[0]
    human = frame.groupby("system")["paraphrase"].mean()
    machine = frame.groupby("system")["m"].mean()
    agree = [
        np.sign(human[a] - human[b]) == np.sign(machine[a] - machine[b])
        for a, b in combinations(sorted(human.index), 2)
    ]
    assert row["pairwise_accuracy"] == pytest.approx(np.mean(agree))
    assert row["n_system_pairs"] == 6 and row["pairwise_accuracy"] == pytest.approx(5 / 6)
    assert row["system_pearson"] == pytest.approx(stats.pearsonr(human, machine)[0])
    assert row["system_kendall"] == pytest.approx(stats.kendalltau(human, machine)[0])
    assert row["pairwise_accuracy_ci_low"] <= row["pairwise_accuracy"] <= row["pairwise_accuracy_ci_high"]
    assert 0 <= row["soft_pairwise_accuracy"] <= 1
    assert draws["m"]["pairwise_accuracy"][1].shape == (200,)


def test_soft_pairwise_accuracy_is_one_minus_the_mean_gap_of_the_one_sided_p_values():
    human = np.array([[3.0, 1.0, 2.0], [2.0, 2.5, 1.0], [1.0, 0.0, 3.0], [2.0, 1.0, 0.0]])
    metric = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 3.0], [3.0, 0.0, 1.0], [0.0, 1.0, 2.0]])
    expected = []
    for a, b in [(0, 1), (0, 2), (1, 2)]:
        p_h = np.mean(human[:, a] - human[:, b] <= 0)
        p_m = np.mean(metric[:, a] - metric[:, b] <= 0)
        expected.append(1 - abs(p_h - p_m))
    assert meta.soft_pairwise_accuracy(human, metric) == pytest.approx(np.mean(expected))
    assert meta.soft_pairwise_accuracy(human, human) == 1.0


def brute_acc_eq(dh, dm, epsilon):
    human = np.sign(dh)
    machine = np.where(np.abs(dm) <= epsilon, 0, np.sign(dm))
    return np.mean(human == machine)


def test_acc_eq_with_tie_calibration_is_the_best_share_over_every_epsilon():
    rng = np.random.default_rng(4)
    dh = rng.integers(-2, 3, size=80).astype(float)
    dm = np.round(dh * 0.3 + rng.normal(scale=0.5, size=80), 1)
    accuracy, epsilon = meta.acc_eq(dh, dm)
    candidates = np.r_[0.0, np.unique(np.abs(dm))]
    best = max(brute_acc_eq(dh, dm, e) for e in candidates)
    assert accuracy == pytest.approx(best)
    assert brute_acc_eq(dh, dm, epsilon) == pytest.approx(best)
    # Worked by hand: judges tie the first two, order the last; a metric tying only within 0.1 gets all three.
    assert meta.acc_eq([0, 0, 1], [0.05, -0.1, 0.5]) == (1.0, 0.1)


def test_group_by_item_correlations_are_the_mean_of_scipys_per_source():
    rng = np.random.default_rng(2)
    codes = np.repeat(np.arange(12), 4)
    human = rng.integers(1, 5, size=48) / 1.0
    human[:4] = 2.0  # a source the judges do not separate: left out
    machine = human + rng.normal(size=48)
    item, dh, dm = meta._candidate_differences(codes, human, machine)
    pearson, kendall, n = meta.by_item(codes, human, machine, item, dh, dm)
    expected_p, expected_k = [], []
    for code in range(12):
        h, m = human[codes == code], machine[codes == code]
        if np.ptp(h) > 0:
            expected_p.append(stats.pearsonr(h, m)[0])
            expected_k.append(stats.kendalltau(h, m)[0])
    assert n == len(expected_k) == 11
    assert pearson == pytest.approx(np.mean(expected_p)) and kendall == pytest.approx(np.mean(expected_k))


def test_the_human_ceiling_holds_out_each_judge_against_the_others_majority():
    pairs, judgments = data(n=40, seed=3)
    flip = judgments.index[::7]  # some disagreement, so the ceiling is below 1
    judgments.loc[flip, "answer"] = judgments.loc[flip, "answer"].map(
        {"same_meaning": "slightly_similar", "very_different": "mostly_similar"}
    )
    judgments = with_votes(judgments, VOTE)  # the flipped answers vote anew
    votes = judge_votes(judgments)
    frame = pairs.assign(pair_id=pairs["pair_id"].astype(str))
    table, notes = meta.human_ceiling(frame, votes, ["bleu"], {"bleu": "higher"})
    # Brute force: each (judge, pair) row, the others' majority by a loop.
    y, vote, ordinal, bleu = [], [], [], []
    by_pair = votes.groupby("pair_id")
    for row in votes.itertuples():
        others = by_pair.get_group(row.pair_id).query("judge != @row.judge")["vote"]
        if len(others) and others.sum() * 2 != len(others):
            y.append(int(others.sum() * 2 > len(others)))
            vote.append(int(row.vote))
            ordinal.append(row.ordinal)
            bleu.append(frame.set_index("pair_id").loc[row.pair_id, "bleu"])
    judge_row = table[(table["corpus"] == "Global") & (table["predictor"] == "held_out_judge")].iloc[0]
    assert judge_row["n_rows"] == len(y)
    assert judge_row["auc"] == pytest.approx(roc_auc_score(y, ordinal))
    assert judge_row["kappa"] == pytest.approx(cohen_kappa_score(y, vote))
    metric_row = table[(table["corpus"] == "Global") & (table["predictor"] == "bleu")].iloc[0]
    assert metric_row["auc"] == pytest.approx(roc_auc_score(y, bleu))
    bleu = np.array(bleu)
    best = max(cohen_kappa_score(y, (bleu >= t).astype(int)) for t in np.unique(bleu))
    assert metric_row["kappa"] == pytest.approx(best)
    assert notes == []


def test_calibration_numbers_equal_sklearns_and_a_hand_loop():
    rng = np.random.default_rng(8)
    n = 300
    y = rng.random(n) < 0.7
    log_odds = 2.5 * y - 1.2 + rng.normal(size=n)
    p = 1 / (1 + np.exp(-log_odds))
    row, bins = meta._calibration_row(p, y, n_bootstrap=50, seed=1)
    assert row["brier"] == pytest.approx(brier_score_loss(y, p))
    assert row["pr_auc"] == pytest.approx(average_precision_score(y, p))
    ece = 0.0
    for b in range(10):
        inside = np.minimum((p * 10).astype(int), 9) == b
        if inside.any():
            ece += inside.mean() * abs(p[inside].mean() - y[inside].mean())
    assert row["ece"] == pytest.approx(ece)
    assert [b["n"] for b in bins] == list(np.bincount(np.minimum((p * 10).astype(int), 9), minlength=10))
    for name in ("brier", "ece", "pr_auc"):
        assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]


def test_platt_scaling_equals_statsmodels_maximum_likelihood_logit():
    import statsmodels.api as sm

    rng = np.random.default_rng(9)
    x = rng.normal(size=200)
    y = rng.random(200) < 1 / (1 + np.exp(-(1.5 * x - 0.3)))
    a, b = meta.platt(x, y)
    intercept, slope = sm.Logit(y.astype(float), sm.add_constant(x)).fit(disp=0, tol=1e-12).params
    assert a == pytest.approx(slope, rel=1e-5) and b == pytest.approx(intercept, rel=1e-5)


def test_cross_fitted_probabilities_come_from_fits_on_the_other_folds():
    rng = np.random.default_rng(10)
    x = rng.normal(size=100)
    y = x + rng.normal(size=100) > 0
    p = meta.calibrated_probabilities(x, y, seed=1)
    assert not np.isnan(p).any() and 0 < p.min() and p.max() < 1
    # Monotone in the score within a fold, never the label itself.
    assert stats.spearmanr(x, p)[0] > 0.9


def test_the_large_sample_tests_agree_with_the_bootstrap(monkeypatch):
    rng = np.random.default_rng(11)
    n = 600
    y = rng.random(n) < 0.5
    frame = pd.DataFrame(
        {
            "corpus": "A",
            "source": [f"s{i}" for i in range(n)],
            "paraphrase": pd.array(y.astype(int), dtype="Int64"),
            "mean_ordinal": np.where(y, 3.0, 1.5) + rng.normal(scale=0.5, size=n).round(1),
            "good": y + rng.normal(scale=0.6, size=n),
            "weak": y + rng.normal(scale=1.5, size=n),
            "weaker": y + rng.normal(scale=1.6, size=n),
        }
    )
    metrics, directions = ["good", "weak", "weaker"], dict.fromkeys(["good", "weak", "weaker"], "higher")
    setting = meta.Significance(n_resamples=400)
    boot, boot_tests, _ = meta.metric_significance(frame, metrics, directions, setting=setting)
    monkeypatch.setattr(meta, "BOOTSTRAP_MAX_PAIRS", 100)
    large, large_tests, notes = meta.metric_significance(frame, metrics, directions, setting=setting)
    assert set(large["method"]) == {"DeLong", "Meng-Rosenthal-Rubin"} and "Kendall" in notes[0]
    for statistic in ("auc", "spearman"):
        a = boot[(boot["statistic"] == statistic) & (boot["corpus"] == "Global")].set_index("metric")
        b = large[(large["statistic"] == statistic) & (large["corpus"] == "Global")].set_index("metric")
        assert np.allclose(a["value"], b.loc[a.index, "value"])
        assert np.allclose(a["ci_low"], b.loc[a.index, "ci_low"], atol=0.03)
        assert list(a["rank"]) == list(b.loc[a.index, "rank"]) == [1, 2, 2]
    # The Spearman rho of the asymptotic path is scipy's.
    rho = large[(large["statistic"] == "spearman") & (large["metric"] == "good")]["value"].iloc[0]
    assert rho == pytest.approx(stats.spearmanr(frame["good"], frame["mean_ordinal"])[0])


def test_the_bootstrap_p_value_is_the_paired_test_on_the_same_resamples_and_permutation_agrees():
    rng = np.random.default_rng(12)
    n = 200
    y = rng.random(n) < 0.5
    frame = pd.DataFrame(
        {
            "corpus": "A",
            "source": [f"s{i // 2}" for i in range(n)],
            "paraphrase": pd.array(y.astype(int), dtype="Int64"),
            "mean_ordinal": y * 2.0 + 1,
            "good": y + rng.normal(scale=0.5, size=n),
            "bad": rng.normal(size=n),
        }
    )
    directions = {"good": "higher", "bad": "higher"}
    for setting in (
        meta.Significance(n_resamples=300),
        meta.Significance("permutation", n_resamples=300),
        meta.Significance(unit="sources", n_resamples=300),
    ):
        clusters, tests, _ = meta.metric_significance(frame, ["good", "bad"], directions, setting=setting)
        auc = tests[(tests["statistic"] == "auc") & (tests["corpus"] == "Global")].iloc[0]
        assert auc["p_value"] == pytest.approx(1 / 301)  # no resample comes near a difference that large
        assert auc["p_adjusted"] == pytest.approx(min(1.0, auc["p_value"]))  # one test in its family
        assert auc["value_a"] == pytest.approx(roc_auc_score(y, frame["good"]))
        top = clusters[(clusters["statistic"] == "auc") & (clusters["corpus"] == "Global")]
        assert list(top["metric"]) == ["good", "bad"] and list(top["rank"]) == [1, 2]
        assert set(top["n_resamples"]) == {300} and set(top["unit"]) == {setting.unit}


def test_a_bad_significance_setting_is_refused_naming_it():
    with pytest.raises(ValueError, match="method must be one of"):
        meta.Significance("jackknife")
    with pytest.raises(ValueError, match="correction must be one of"):
        build_report(*data(n=12), DIRECTIONS, significance_correction="fdr", **FAST)


def careless_judgments():
    """Three careful judges who follow the truth 90% of the time, two careless ones who say paraphrase to all."""
    rng = np.random.default_rng(13)
    truth = rng.random(60) < 0.4
    rows = []
    for i, t in enumerate(truth):
        for j in range(3):
            right = rng.random() < 0.9
            rows.append((f"p{i}", f"careful{j}", "same_meaning" if right == t else "very_different"))
        rows += [(f"p{i}", f"careless{j}", "same_meaning") for j in range(2)]
    return truth, with_votes(pd.DataFrame(rows, columns=["pair_id", "judge", "answer"]), VOTE)


@pytest.mark.parametrize("source", ["dawid_skene", "mace"])
def test_crowd_labels_are_crowd_kits_and_outvote_careless_judges(source):
    from crowdkit.aggregation import MACE, DawidSkene

    truth, judgments = careless_judgments()
    votes = judge_votes(judgments)
    labels = crowd_labels(votes, source)
    crowd = pd.DataFrame({"task": votes["pair_id"], "worker": votes["judge"], "label": votes["vote"].astype(int)})
    model = DawidSkene(n_iter=100) if source == "dawid_skene" else MACE(n_restarts=1, n_iter=50, random_state=2024)
    direct = model.fit_predict(crowd)
    assert (labels.reindex(direct.index).to_numpy() == direct.to_numpy()).all()
    majority = votes.groupby("pair_id")["vote"].mean() > 0.5
    order = [f"p{i}" for i in range(60)]
    assert (labels[order].to_numpy() == truth).mean() > (majority[order].to_numpy() == truth).mean()
    competence = judge_competence(votes, source).set_index("judge")
    column = "dawid_skene_accuracy" if source == "dawid_skene" else "mace_competence"
    assert competence.loc["careful0", column] > competence.loc["careless0", column]


def test_a_crowd_label_report_is_built_like_the_majoritys_and_names_its_source():
    pairs, judgments = data(n=30)
    report = build_report(pairs, judgments, DIRECTIONS, label_source="dawid_skene", **FAST)
    assert report.summary["n_labelled"] == 30
    assert not report.tables["judge_competence"].empty
    majority = build_report(pairs, judgments, DIRECTIONS, label_source="human", **FAST)
    assert majority.tables["judge_competence"].empty  # the majority has no model of the judges


@pytest.mark.parametrize("label_source", ["human", "gold"])
def test_every_meta_table_is_built_and_cites_nothing_wrong(label_source):
    pairs, judgments = data(n=60)
    pairs = pairs.assign(source=[f"s{i // 3}" for i in range(60)], system=np.array(list("ABCDE"))[np.arange(60) % 5])
    report = build_report(pairs, judgments, DIRECTIONS, label_source=label_source, **FAST)
    for name in META_TABLES[:-1]:
        assert not report.tables[name].empty, name
    clusters = report.tables["metric_clusters"]
    assert {"auc", "spearman", "kendall", "pairwise_accuracy", "system_pearson", "system_kendall"} <= set(
        clusters["statistic"]
    )
    assert (clusters["n_resamples"] == FAST["n_bootstrap"]).all() and (clusters["correction"] == "holm").all()


@pytest.mark.parametrize(
    "degenerate",
    ["one_class", "constant_scores", "one_judge", "one_system", "no_judgments", "nan_scores", "one_metric"],
)
def test_degenerate_data_gives_notes_never_exceptions(degenerate):
    pairs, judgments = data(n=24)
    pairs = pairs.assign(source=[f"s{i // 2}" for i in range(24)], system="A")
    directions = dict(DIRECTIONS)
    if degenerate == "one_class":
        pairs["gold_label"] = 1
        judgments = with_votes(judgments.assign(answer="same_meaning"), VOTE)
    elif degenerate == "constant_scores":
        pairs[["lev", "bleu", "parapluie_direct"]] = 0.5
    elif degenerate == "one_judge":
        judgments = judgments.assign(judge="judge-00001").drop_duplicates(["pair_id", "judge"])
    elif degenerate == "no_judgments":
        judgments = judgments.iloc[:0]
    elif degenerate == "nan_scores":
        pairs.loc[::2, ["lev", "bleu"]] = np.nan
    elif degenerate == "one_metric":
        directions = {"bleu": "higher"}
    for label_source in ("human", "gold", "dawid_skene"):
        report = build_report(pairs, judgments, directions, label_source=label_source, **FAST)
        assert set(META_TABLES) <= set(report.tables)


def test_calibration_gives_the_same_bits_whatever_the_blas_threads():
    """The report command's forked workers run one BLAS thread, a Celery worker as many as its CPUs: Platt's fits
    and the Brier, ECE and PR AUC of every resample must not hang on which computed them. 20,000 pairs: long
    enough for OpenBLAS to split a product between its threads (both checks failed when they were BLAS's)."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(5)
    n = meta.PLATT_MAX_PAIRS
    p = rng.random(n)
    y = (rng.random(n) < p).astype(float)
    kernel = meta._CalibrationKernel(p, y, meta._bins(p))
    weights = next(resampling.pair_weights(n, 50, seed=1))
    found = []
    for threads in (1, 2):
        with threadpool_limits(threads):
            found.append((meta.platt(p - 0.5, y), np.vstack(kernel(weights))))
    assert found[0][0] == found[1][0] and np.array_equal(found[0][1], found[1][1])
