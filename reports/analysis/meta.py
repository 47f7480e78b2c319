"""Meta-evaluation as the WMT metrics tasks state it: which metric is better, significantly, and how it is read.

- `system_accuracy`: system-level pairwise accuracy (Kocmi et al. 2021) and soft pairwise accuracy
  (Thompson et al., WMT24), beside each metric's system-level Pearson and Kendall;
- `metric_significance`: every two metrics' difference tested (paired bootstrap, or Deutsch et al. 2021's
  "perm-both" permutation), p-values corrected (Holm by default), metrics ranked into significance clusters;
- `within_source`: WMT23's group-by-item correlations and tie-calibrated pairwise accuracy (acc_eq,
  Deutsch et al. 2023) over the candidates of one source;
- `human_ceiling`: one held-out judge against the others' majority, beside each metric on the same rows;
- `calibration`: reliability bins, Brier score, ECE and precision-recall AUC, with bootstrap intervals.

Pure functions over DataFrames; degenerate data (one class, one judge, one system, constant scores)
gives rows of NaN and a note, never an exception.
"""

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import special

from metrics.registry import LOG_ODDS_EVEN, natural_threshold_of
from reports.analysis import resampling
from reports.analysis.common import ascending_order, corpora, orient, running_sums, subset_masks, subsets
from reports.analysis.labels import GLOBAL
from reports.analysis.rank_correlation import Ranks
from reports.analysis.ranking import BOOTSTRAP_MAX_PAIRS, RANK_TARGETS, _delong, paired_p_value
from reports.analysis.systems import source_weights

ALPHA = 0.05
METHODS = ("bootstrap", "permutation")
UNITS = ("pairs", "sources")
CORRECTIONS = ("holm", "bonferroni", "none")
PAIR_STATISTICS = ("auc", "spearman", "kendall")
SYSTEM_STATISTICS = ("pairwise_accuracy", "system_pearson", "system_kendall")
N_BINS = 10  # reliability bins of equal width over [0, 1]
FOLDS = 5  # cross-fitting of the calibrated probabilities
PLATT_MAX_PAIRS = 20_000  # training pairs of one Platt fit at most (a seeded sample above)
Z95 = 1.959964


@dataclass(frozen=True)
class Significance:
    """How metrics are compared: the test, what is resampled, how many times, the correction, the level."""

    method: str = "bootstrap"
    unit: str = "pairs"
    n_resamples: int = 1000
    correction: str = "holm"
    alpha: float = ALPHA

    def __post_init__(self):
        for name, allowed in (("method", METHODS), ("unit", UNITS), ("correction", CORRECTIONS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")


# --- Corrections and clusters -------------------------------------------------------------------------


def corrected(p_values, correction="holm") -> np.ndarray:
    """p-values adjusted for the family (Holm's step-down, Bonferroni, or none); NaN stays NaN, out of the family."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    m = int(known.sum())
    if correction == "none" or not m:
        return p.copy() if correction == "none" else adjusted
    values = p[known]
    if correction == "bonferroni":
        adjusted[known] = np.minimum(1.0, values * m)
        return adjusted
    order = np.argsort(values, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * values[order])
    result = np.empty(m)
    result[order] = np.minimum(1.0, stepped)
    adjusted[known] = result
    return adjusted


def clusters(values: dict, significant: dict) -> dict:
    """Each metric's (position, cluster, n_better), best value first (WMT's significance clusters).

    `significant[(a, b)]`: a and b differ significantly. Greedy from the top, as WMT22-23's tables: a
    cluster takes the metrics in order until one is significantly worse than the cluster's first metric,
    which opens the next cluster. `n_better`: how many metrics are significantly better (WMT21's rank - 1).
    NaN values are left out.
    """
    ranked = sorted((m for m, v in values.items() if v == v), key=lambda m: -values[m])
    result, cluster, head = {}, 1, None
    for position, metric in enumerate(ranked, start=1):
        if head is None:
            head = metric
        elif _differs(significant, head, metric):
            cluster, head = cluster + 1, metric
        better = sum(1 for other in ranked if values[other] > values[metric] and _differs(significant, other, metric))
        result[metric] = (position, cluster, better)
    return result


def _differs(significant, a, b):
    return bool(significant.get((a, b), significant.get((b, a), False)))


# --- Pair-level statistics under resampling -------------------------------------------------------------


def _kernels(statistic, oriented, labels, target):
    if statistic == "auc":
        return {m: resampling.auc(o, labels) for m, o in oriented.items()}
    ranks = resampling.target_ranks(target)
    kind = resampling.Spearman if statistic == "spearman" else resampling.Kendall
    return {m: kind(o, ranks) for m, o in oriented.items()}


def _observed(kernels, masks):
    return {m: float(kernels[m](masks[m][:, None].astype(np.int32))[0]) for m in kernels}


def _bootstrap(kernels, masks, n, setting, seed, groups):
    draws = {m: [] for m in kernels}
    complete = {m: bool(masks[m].all()) for m in kernels}
    for weights in resampling.pair_weights(n, setting.n_resamples, seed, groups=groups):
        for metric, kernel in kernels.items():
            # The very array when a metric scored every pair: the target's ranks of it are then reused.
            draws[metric].append(kernel(weights if complete[metric] else weights * masks[metric][:, None]))
    return {m: np.concatenate(v) if v else np.empty(0) for m, v in draws.items()}


def _permutation_p(statistic, a, b, labels, target, mask, setting, seed, groups):
    """Deutsch et al.'s perm-both for two metrics: each pair's (or source's) two scores, as ranks scaled to
    [0, 1] (the statistics read ranks only), swapped with probability one half; p = (1 + #|d| >= |d_obs|) / (1 + B)."""
    n = int(mask.sum())
    ranked = [(Ranks(x[mask]).average - 1) / max(n - 1, 1) for x in (a, b)]
    units = groups[mask] if groups is not None else np.arange(n)
    _codes, units = np.unique(units, return_inverse=True)
    rng = np.random.default_rng(seed)
    y, t = labels[mask], target[mask]
    observed = _difference(statistic, ranked[0][:, None], ranked[1][:, None], y, t)[0]
    exceed, total = 0, 0
    chunk = max(1, resampling.CHUNK_CELLS // max(n, 1))
    for start in range(0, setting.n_resamples, chunk):
        size = min(chunk, setting.n_resamples - start)
        swap = rng.random((units.max() + 1 if n else 0, size)) < 0.5
        swapped = swap[units]
        first = np.where(swapped, ranked[1][:, None], ranked[0][:, None])
        second = np.where(swapped, ranked[0][:, None], ranked[1][:, None])
        differences = _difference(statistic, first, second, y, t)
        exceed += int(np.sum(np.abs(differences) >= abs(observed) - 1e-12))
        total += size
    return (1 + exceed) / (1 + total) if total and observed == observed else np.nan


def _difference(statistic, first, second, labels, target):
    """The statistic of each column of `first` minus that of `second` (scores per pair x resamples)."""
    ones = np.ones((len(labels), 1), dtype=np.int32)
    values = []
    for scores in (first, second):
        column = [
            float(next(iter(_kernels(statistic, {"m": scores[:, j]}, labels, target).values()))(ones)[0])
            for j in range(scores.shape[1])
        ]
        values.append(np.array(column))
    return values[0] - values[1]


def _spearman_large(oriented, target, orders):
    """Spearman's rho of each metric (Fisher-z 95% interval, variance 1.06 / (n - 3): Fieller et al. 1957)
    and the metrics' own rank correlations, for Meng, Rosenthal & Rubin's (1992) test of dependent correlations."""
    names = list(oriented)
    ranks = np.vstack([Ranks(target).average, *[Ranks(oriented[m], orders[m]).average for m in names]])
    r = np.corrcoef(ranks)
    return {m: r[0, i + 1] for i, m in enumerate(names)}, {
        (a, b): r[i + 1, j + 1] for i, a in enumerate(names) for j, b in enumerate(names)
    }


def _mrr_p(r1, r2, r12, n):
    """Two-sided p of Meng, Rosenthal & Rubin's z for two correlations sharing one variable (the judges')."""
    if n < 4 or any(v != v for v in (r1, r2, r12)):
        return np.nan
    r1, r2 = np.clip([r1, r2], -0.999999, 0.999999)
    mean_square = (r1**2 + r2**2) / 2
    f = min(1.0, (1 - r12) / (2 * (1 - mean_square)))
    h = (1 - f * mean_square) / (1 - mean_square)
    denominator = 2 * (1 - r12) * h
    if denominator <= 0:
        return float(r1 == r2) if r1 == r2 else 0.0
    z = (np.arctanh(r1) - np.arctanh(r2)) * np.sqrt((n - 3) / denominator)
    return float(2 * special.ndtr(-abs(z)))


def _pair_level(statistic, frame, metrics, directions, setting, seed, label_source, sorts, orders=None):
    """Rows of the clusters and of the tests for one pair-level statistic, corpus by corpus then Global.

    `sorts`: each metric's sort on a corpus's rows kept by a column, by (corpus, column, metric), shared by
    the statistics (the gold report's AUC and Spearman keep the same rows); cut from `orders`
    (`common.ScoreOrders` of `frame`) when given."""
    target_column = "paraphrase" if statistic == "auc" else RANK_TARGETS[label_source]
    cluster_rows, test_rows, notes = [], [], []
    # Only labelled rows count: cut once (a few thousand of 400,000 on a live campaign), the corpora in their order.
    has_target = frame[target_column].notna().to_numpy()
    labelled = frame if has_target.all() else frame[has_target]
    for corpus, members in subset_masks(labelled, corpora(frame)):
        part = labelled if members is None else labelled[members]
        labels = part["paraphrase"].to_numpy(dtype=float, na_value=np.nan) == 1
        target = part[target_column].to_numpy(dtype=float, na_value=np.nan)
        oriented = {
            m: orient(part[m].to_numpy(dtype=float, na_value=np.nan), directions[m])
            for m in metrics
            if part[m].notna().any()
        }
        if len(oriented) < 1 or len(part) < 3 or np.ptp(target) == 0:
            continue
        masks = {m: ~np.isnan(o) for m, o in oriented.items()}
        groups = pd.factorize(part["source"])[0] if setting.unit == "sources" and "source" in part else None
        large = len(part) > BOOTSTRAP_MAX_PAIRS
        if large and statistic == "kendall":
            notes.append(
                f"{corpus}: over {BOOTSTRAP_MAX_PAIRS:,} labelled pairs, Kendall's tau is not resampled; "
                "its differences are tested through Spearman's rho."
            )
            continue
        if large:
            complete = {m: o for m, o in oriented.items() if masks[m].all()}
            rows = _frame_rows(has_target, members)
            ordered = {m: _sort_once(sorts, (corpus, target_column, m), o, orders, rows) for m, o in complete.items()}
            values, intervals, p_of = _large_sample(statistic, oriented, labels, target, masks, ordered)
            method, n_resamples = ("DeLong" if statistic == "auc" else "Meng-Rosenthal-Rubin"), 0
        else:
            kernels = _kernels(statistic, oriented, labels, target)
            values = _observed(kernels, masks)
            draws = _bootstrap(kernels, masks, len(part), setting, seed, groups)
            intervals = {m: _percentile(d) for m, d in draws.items()}

            def p_of(a, b, draws=draws, values=values, labels=labels, target=target, groups=groups, masks=masks,
                     oriented=oriented):  # fmt: skip
                if setting.method == "permutation":
                    both = masks[a] & masks[b]
                    return _permutation_p(statistic, oriented[a], oriented[b], labels, target, both, setting, seed,
                                          groups)  # fmt: skip
                return paired_p_value(values[a], values[b], draws[a], draws[b])["p_value"]

            method, n_resamples = setting.method, setting.n_resamples
        tests = [
            {
                "metric_a": a,
                "metric_b": b,
                "n": int((masks[a] & masks[b]).sum()),
                "value_a": values[a],
                "value_b": values[b],
                "difference": values[a] - values[b],
                "p_value": p_of(a, b),
            }
            for a, b in combinations(oriented, 2)
        ]
        cluster_rows_of, test_rows_of = _rank(values, intervals, tests, masks, setting)
        common = {
            "statistic": statistic,
            "corpus": corpus,
            "method": method,
            "unit": setting.unit if not large else "pairs",
            "n_resamples": n_resamples,
            "correction": setting.correction,
        }
        cluster_rows += [{**common, **row} for row in cluster_rows_of]
        test_rows += [{**common, **row} for row in test_rows_of]
    return cluster_rows, test_rows, notes


def _large_sample(statistic, oriented, labels, target, masks, sorts):
    """Above BOOTSTRAP_MAX_PAIRS: DeLong's AUC intervals and tests; Spearman by Fisher's z and MRR's test.

    `sorts`: a sort of each metric that scored every pair (`_sort_once`)."""
    complete = {m: o for m, o in oriented.items() if masks[m].all()}
    partial = [m for m in oriented if m not in complete]
    values, intervals, tested = {}, {}, {}
    if statistic == "auc":
        usable = complete and labels.any() and not labels.all()
        aucs, covariance = _delong(complete, labels, sorts) if usable else ({}, None)
        names = list(aucs)
        for i, m in enumerate(names):
            half = Z95 * np.sqrt(covariance[i, i])
            values[m], intervals[m] = aucs[m], (aucs[m] - half, aucs[m] + half)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                variance = covariance[i, i] + covariance[j, j] - 2 * covariance[i, j]
                d = aucs[a] - aucs[b]
                tested[(a, b)] = 2 * special.ndtr(-abs(d) / np.sqrt(variance)) if variance > 0 else float(d == 0)
    else:
        n = len(target)
        rhos, between = _spearman_large(complete, target, sorts) if complete else ({}, {})
        for m, rho in rhos.items():
            half = Z95 * np.sqrt(1.06 / (n - 3))
            values[m], intervals[m] = rho, (np.tanh(np.arctanh(rho) - half), np.tanh(np.arctanh(rho) + half))
        for (a, b), r12 in between.items():
            tested[(a, b)] = _mrr_p(rhos[a], rhos[b], r12, n)
    for m in partial:
        values[m], intervals[m] = np.nan, (np.nan, np.nan)

    def p_of(a, b):
        return tested.get((a, b), np.nan)

    return values, intervals, p_of


def _sort_once(sorts, key, values, orders=None, rows=None):
    """A sort of `values` (np.argsort's, or cut from `orders` on the frame's `rows`), made once per key of `sorts`:
    DeLong's counts and Spearman's ranks read no order inside a run of ties."""
    if key not in sorts:
        sorts[key] = ascending_order(values, orders, key[-1], rows)
    return sorts[key]


def _frame_rows(has_target, members):
    """The frame's rows of a corpus's labelled rows (`members`: a mask of the labelled rows; None: all of them)."""
    if members is None:
        return has_target
    rows = has_target.copy()
    rows[has_target] = members
    return rows


def _percentile(draws):
    draws = draws[~np.isnan(draws)]
    return tuple(np.percentile(draws, [2.5, 97.5])) if len(draws) else (np.nan, np.nan)


def _rank(values, intervals, tests, masks, setting):
    """The cluster rows (best first) and the test rows with their corrected p-values, of one family of tests."""
    adjusted = corrected([t["p_value"] for t in tests], setting.correction)
    significant = {}
    for test, p in zip(tests, adjusted):
        test["p_adjusted"] = p
        test["significant"] = bool(p < setting.alpha) if p == p else False
        significant[(test["metric_a"], test["metric_b"])] = test["significant"]
    placed = clusters(values, significant)
    rows = []
    for metric, (position, cluster, better) in sorted(placed.items(), key=lambda item: item[1][0]):
        low, high = intervals.get(metric, (np.nan, np.nan))
        rows.append(
            {
                "rank": cluster,
                "position": position,
                "metric": metric,
                "value": values[metric],
                "ci_low": low,
                "ci_high": high,
                "n": int(masks[metric].sum()) if metric in masks else 0,
                "n_better": better,
            }
        )
    return rows, tests


CLUSTER_COLUMNS = [
    "statistic", "corpus", "rank", "position", "metric", "value", "ci_low", "ci_high", "n", "n_better",
    "method", "unit", "n_resamples", "correction",
]  # fmt: skip
TEST_COLUMNS = [
    "statistic", "corpus", "metric_a", "metric_b", "n", "value_a", "value_b", "difference", "p_value", "p_adjusted",
    "significant", "method", "unit", "n_resamples", "correction",
]  # fmt: skip


def metric_significance(frame, metrics, directions, *, label_source="human", setting=None, seed=2024,
                        systems=None, orders=None):  # fmt: skip
    """(clusters, tests, notes): the pair-level statistics (AUC, Spearman, Kendall) of each corpus and Global,
    then the system-level ones (`systems`: the frame `system_level` reads), each family corrected and clustered.
    `orders`: the metrics' `common.ScoreOrders` on `frame`, when sorted already."""
    setting = setting or Significance()
    system_draws = {}
    if systems is not None:
        _table, system_draws = system_level(systems, metrics, directions, n_resamples=setting.n_resamples, seed=seed)
    cluster_rows, test_rows, notes = [], [], []
    sorts = {}
    if len(metrics) >= 1:
        for statistic in PAIR_STATISTICS:
            if statistic == "auc" and not frame["paraphrase"].notna().any():
                continue
            rows, tests, statistic_notes = _pair_level(
                statistic, frame, metrics, directions, setting, seed, label_source, sorts, orders
            )
            cluster_rows += rows
            test_rows += tests
            notes += statistic_notes
    if system_draws:
        rows, tests = _system_clusters(system_draws, setting)
        cluster_rows += rows
        test_rows += tests
    if len(metrics) < 2:
        notes.append("Fewer than two metrics with scores: there is no difference between metrics to test.")
    return (
        pd.DataFrame(cluster_rows, columns=CLUSTER_COLUMNS),
        pd.DataFrame(test_rows, columns=TEST_COLUMNS),
        list(dict.fromkeys(notes)),
    )


# --- System level --------------------------------------------------------------------------------------


def _system_means(both, value, sources, systems, weights):
    """Per draw (rows of `weights`, sources as columns) each system's mean of `value` (NaN: no pair drawn)."""
    sums = np.zeros((len(systems), len(sources)))
    counts = np.zeros((len(systems), len(sources)))
    s = both["system_code"].to_numpy()
    c = both["source_code"].to_numpy()
    np.add.at(sums, (s, c), both[value].to_numpy(float))
    np.add.at(counts, (s, c), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (weights @ sums.T) / (weights @ counts.T)


def _system_statistics(human, machine):
    """Pairwise accuracy, Pearson and Kendall's tau-b of each row's systems (draws x systems); NaN systems left out."""
    n = human.shape[1]
    first, second = np.triu_indices(n, 1)
    dh, dm = human[:, first] - human[:, second], machine[:, first] - machine[:, second]
    valid = ~(np.isnan(dh) | np.isnan(dm))
    n_pairs = valid.sum(axis=1)
    sh, sm = np.sign(np.where(valid, dh, 0)), np.sign(np.where(valid, dm, 0))
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(n_pairs > 0, ((sh == sm) & valid).sum(axis=1) / np.maximum(n_pairs, 1), np.nan)
        concordance = (sh * sm).sum(axis=1)
        x_ties, y_ties = ((sm == 0) & valid).sum(axis=1), ((sh == 0) & valid).sum(axis=1)
        kendall = concordance / np.sqrt((n_pairs - x_ties) * (n_pairs - y_ties))
        both = ~(np.isnan(human) | np.isnan(machine))
        k = both.sum(axis=1)
        h, m = np.where(both, human, 0), np.where(both, machine, 0)
        hc = np.where(both, h - h.sum(axis=1, keepdims=True) / k[:, None], 0)
        mc = np.where(both, m - m.sum(axis=1, keepdims=True) / k[:, None], 0)
        pearson = (hc * mc).sum(axis=1) / np.sqrt((hc**2).sum(axis=1) * (mc**2).sum(axis=1))
    few = n_pairs < 3  # fewer than three systems: no correlation (as `systems.system_correlation`)
    kendall[few], pearson[k < 3] = np.nan, np.nan
    return {"pairwise_accuracy": accuracy, "system_pearson": pearson, "system_kendall": kendall}


def system_level(frame, metrics, directions, *, n_resamples=1000, seed=2024):
    """(table, draws): per metric, system-level pairwise accuracy [95% CI over resampled sources], soft pairwise
    accuracy, Pearson and Kendall; `draws` feeds `metric_significance`'s system-level clusters.

    Both sides average the same pairs (labelled and scored), as `systems.system_correlation`. Soft
    pairwise accuracy (Thompson et al. 2024): the mean over system pairs of 1 - |p_human - p_metric|, each
    p the one-sided bootstrap p-value that the first system is not better (the share of draws where it is
    not ahead), human and metric on the same draws.
    """
    columns = [
        "metric", "n_systems", "n_system_pairs", "pairwise_accuracy", "pairwise_accuracy_ci_low",
        "pairwise_accuracy_ci_high", "soft_pairwise_accuracy", "system_pearson", "system_kendall", "n_resamples",
    ]  # fmt: skip
    frame = frame[frame["system"].fillna("").astype(str).ne("") & frame["paraphrase"].notna()]
    if frame.empty or frame["system"].nunique() < 2:
        return pd.DataFrame(columns=columns), {}
    frame = frame.assign(
        paraphrase=frame["paraphrase"].astype(float),
        system_code=pd.factorize(frame["system"], sort=True)[0],
        source_code=pd.factorize(frame["source"])[0],
    )
    systems = np.arange(frame["system_code"].max() + 1)
    sources = np.arange(frame["source_code"].max() + 1)
    ones = np.ones((1, len(sources)))
    draws_of = list(source_weights(len(sources), n_resamples, seed, chunk=max(1, 2_000_000 // len(sources))))
    rows, draws = [], {}
    for metric in metrics:
        scored = frame[frame[metric].notna()]
        if scored["system"].nunique() < 2:
            continue
        both = scored.assign(score=orient(scored[metric].to_numpy(float), directions[metric]))
        observed = _system_statistics(
            _system_means(both, "paraphrase", sources, systems, ones),
            _system_means(both, "score", sources, systems, ones),
        )
        human = np.vstack([_system_means(both, "paraphrase", sources, systems, w) for w in draws_of])
        machine = np.vstack([_system_means(both, "score", sources, systems, w) for w in draws_of])
        resampled = _system_statistics(human, machine)
        draws[metric] = {name: (float(observed[name][0]), values) for name, values in resampled.items()}
        low, high = _percentile(resampled["pairwise_accuracy"])
        rows.append(
            {
                "metric": metric,
                "n_systems": int(both["system"].nunique()),
                "n_system_pairs": int(both["system"].nunique() * (both["system"].nunique() - 1) // 2),
                "pairwise_accuracy": float(observed["pairwise_accuracy"][0]),
                "pairwise_accuracy_ci_low": low,
                "pairwise_accuracy_ci_high": high,
                "soft_pairwise_accuracy": soft_pairwise_accuracy(human, machine),
                "system_pearson": float(observed["system_pearson"][0]),
                "system_kendall": float(observed["system_kendall"][0]),
                "n_resamples": n_resamples,
            }
        )
    return pd.DataFrame(rows, columns=columns), draws


def system_accuracy(frame, metrics, directions, *, n_resamples=1000, seed=2024) -> pd.DataFrame:
    """`system_level`'s table alone (the report's step: its draws feed the clusters inside their own step)."""
    return system_level(frame, metrics, directions, n_resamples=n_resamples, seed=seed)[0]


def soft_pairwise_accuracy(human_draws, metric_draws) -> float:
    """Thompson et al.'s SPA from draws (draws x systems): mean over system pairs of 1 - |p_h - p_m|,
    p the share of draws where the first system is not ahead of the second."""
    first, second = np.triu_indices(human_draws.shape[1], 1)
    if not len(first):
        return np.nan
    with np.errstate(invalid="ignore"):
        p_human = np.nanmean(human_draws[:, first] - human_draws[:, second] <= 0, axis=0)
        p_metric = np.nanmean(metric_draws[:, first] - metric_draws[:, second] <= 0, axis=0)
    return float(np.mean(1 - np.abs(p_human - p_metric)))


def _system_clusters(draws, setting):
    cluster_rows, test_rows = [], []
    for statistic in SYSTEM_STATISTICS:
        values = {m: d[statistic][0] for m, d in draws.items()}
        resampled = {m: d[statistic][1] for m, d in draws.items()}
        intervals = {m: _percentile(v) for m, v in resampled.items()}
        masks = {m: np.ones(len(resampled[m]), dtype=bool) for m in draws}
        tests = [
            {
                "metric_a": a,
                "metric_b": b,
                "n": len(resampled[a]),
                "value_a": values[a],
                "value_b": values[b],
                "difference": values[a] - values[b],
                "p_value": paired_p_value(values[a], values[b], resampled[a], resampled[b])["p_value"],
            }
            for a, b in combinations(draws, 2)
        ]
        rows, tests = _rank(values, intervals, tests, masks, setting)
        n_resamples = len(next(iter(resampled.values()))) if resampled else 0
        common = {
            "statistic": statistic,
            "corpus": GLOBAL,
            "method": "bootstrap",
            "unit": "sources",
            "n_resamples": n_resamples,
            "correction": setting.correction,
        }
        for row in rows:
            row["n"] = None  # systems, not pairs: the system table says how many
        cluster_rows += [{**common, **row} for row in rows]
        test_rows += [{**common, **row, "n": None} for row in tests]
    return cluster_rows, test_rows


# --- Within one source ---------------------------------------------------------------------------------


def within_source(frame, metrics, directions, label_source="human") -> tuple[pd.DataFrame, list[str]]:
    """Per metric and corpus: over the sources with two or more labelled, scored candidates, the mean of each
    source's Pearson and Kendall (WMT23's group-by-item) and acc_eq with tie calibration (Deutsch et al. 2023).

    acc_eq counts, over every two candidates of one source, whether the metric orders them as the judges do
    (a tie being a third order); the metric calls two scores tied when they are within epsilon, the epsilon
    with the best acc_eq (tie calibration, fitted on these pairs: an optimistic figure, as the paper says).
    The judges' value: the mean 4-point answer (human labels), else the 0/1 label.
    """
    target = RANK_TARGETS.get(label_source, "paraphrase")
    columns = [
        "metric", "corpus", "against", "n_sources", "n_candidates", "n_candidate_pairs", "pearson_by_item",
        "kendall_by_item", "n_items_correlated", "acc_eq", "epsilon", "human_tie_share",
    ]  # fmt: skip
    if target not in frame or "source" not in frame:
        return pd.DataFrame(columns=columns), []
    rows = []
    labelled = frame[frame[target].notna()]
    # The sources coded once (-1: none), not once per corpus and metric: factorizing 400,000 strings takes a while.
    labelled = labelled.assign(source=pd.factorize(labelled["source"])[0])
    for corpus, part in subsets(labelled):
        for metric in metrics:
            scored = part[metric].notna().to_numpy()
            sources = part["source"].to_numpy()[scored]
            grouped = _with_two_candidates(sources)
            if not grouped.any():
                continue
            codes = pd.factorize(sources[grouped])[0]  # integers: quick to code, in order of first appearance
            human = part[target].to_numpy(float)[scored][grouped]
            machine = orient(part[metric].to_numpy(float)[scored][grouped], directions[metric])
            item, dh, dm = _candidate_differences(codes, human, machine)
            pearson, kendall, n_correlated = by_item(codes, human, machine, item, dh, dm)
            accuracy, epsilon = acc_eq(dh, dm)
            rows.append(
                {
                    "metric": metric,
                    "corpus": corpus,
                    "against": "mean_ordinal" if target == "mean_ordinal" else "label",
                    "n_sources": int(codes.max() + 1),
                    "n_candidates": len(codes),
                    "n_candidate_pairs": len(dh),
                    "pearson_by_item": pearson,
                    "kendall_by_item": kendall,
                    "n_items_correlated": n_correlated,
                    "acc_eq": accuracy,
                    "epsilon": epsilon,
                    "human_tie_share": float(np.mean(dh == 0)) if len(dh) else np.nan,
                }
            )
    notes = []
    if not rows and metrics:
        notes.append("No source has two or more labelled, scored candidates: within-source ranking is undefined.")
    return pd.DataFrame(rows, columns=columns), notes


def _with_two_candidates(sources) -> np.ndarray:
    """Which rows belong to a source (a code; -1: none) that has two rows or more."""
    known = sources >= 0
    counts = np.bincount(sources[known], minlength=1)
    return known & (counts[np.maximum(sources, 0)] >= 2)


def _candidate_differences(codes, human, machine):
    """Every two candidates of one source: the source's code, the judges' difference and the metric's."""
    order = np.argsort(codes, kind="stable")
    codes, human, machine = codes[order], human[order], machine[order]
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    sizes = np.diff(np.r_[starts, len(codes)])
    firsts, seconds = [], []
    for k in np.unique(sizes):
        first, second = np.triu_indices(k, 1)
        base = starts[sizes == k][:, None]
        firsts.append((base + first).ravel())
        seconds.append((base + second).ravel())
    i, j = np.concatenate(firsts), np.concatenate(seconds)
    return codes[i], human[i] - human[j], machine[i] - machine[j]


def acc_eq(dh, dm) -> tuple[float, float]:
    """(acc_eq, epsilon) with tie calibration: the share of pairs ordered alike (ties a third order), the metric
    calling |dm| <= epsilon a tie, at the epsilon (0 or an observed |dm|) with the best share; the smallest such."""
    dh, dm = np.asarray(dh, float), np.asarray(dm, float)
    if not len(dh):
        return np.nan, np.nan
    gaps = np.abs(dm)
    order = np.argsort(gaps, kind="stable")
    gaps, human_tie = gaps[order], dh[order] == 0
    agrees_untied = (np.sign(dh[order]) == np.sign(dm[order])) & ~human_tie & (gaps > 0)
    # At epsilon = gaps[k] (the last of its run), pairs up to k are ties: agreement = ties the judges tie too
    # among them, plus the untied agreements after them.
    last = np.flatnonzero(np.r_[gaps[1:] != gaps[:-1], True])
    tied_agree = np.cumsum(human_tie)[last]
    untied_after = agrees_untied.sum() - np.cumsum(agrees_untied)[last]
    candidates = np.r_[0.0, gaps[last]]
    strict_zero = int((agrees_untied).sum())  # epsilon below every positive gap: only exact ties tie
    zero_ties = int((human_tie & (gaps == 0)).sum())
    scores = np.r_[strict_zero + zero_ties, tied_agree + untied_after]
    best = int(np.argmax(scores))
    return float(scores[best] / len(dh)), float(candidates[best])


def by_item(codes, human, machine, item, dh, dm):
    """(mean Pearson, mean Kendall's tau-b, sources counted) over the sources where judges and metric both vary.

    Kendall's tau-b of a source from its candidate pairs (`item`, `dh`, `dm`); Pearson from its centred values.
    """
    n_items = int(codes.max()) + 1
    pairs = np.bincount(item, minlength=n_items).astype(float)
    concordance = np.bincount(item, np.sign(dh) * np.sign(dm), minlength=n_items)
    human_ties = np.bincount(item, dh == 0, minlength=n_items)
    metric_ties = np.bincount(item, dm == 0, minlength=n_items)
    varies = (pairs - human_ties > 0) & (pairs - metric_ties > 0)
    if not varies.any():
        return np.nan, np.nan, 0
    with np.errstate(invalid="ignore", divide="ignore"):
        kendall = concordance / np.sqrt((pairs - metric_ties) * (pairs - human_ties))
        counts = np.bincount(codes, minlength=n_items)
        hc = human - (np.bincount(codes, human, minlength=n_items) / counts)[codes]
        mc = machine - (np.bincount(codes, machine, minlength=n_items) / counts)[codes]
        pearson = np.bincount(codes, hc * mc, minlength=n_items) / np.sqrt(
            np.bincount(codes, hc * hc, minlength=n_items) * np.bincount(codes, mc * mc, minlength=n_items)
        )
    return float(np.mean(pearson[varies])), float(np.mean(kendall[varies])), int(varies.sum())


# --- The human ceiling ---------------------------------------------------------------------------------


def human_ceiling(frame, votes, metrics, directions) -> tuple[pd.DataFrame, list[str]]:
    """Per corpus: one judge held out against the majority of the others on the pairs it answered (AUC of its
    4-point answer, Cohen's kappa of its vote), and each metric on the very same rows.

    `votes`: `pair_id`, `judge`, `vote` (1/0) and `ordinal` (1-4, NaN for none). A row is a (judge, pair) whose
    other judges have a majority; a metric's kappa is at its threshold with the best kappa on these rows
    (a-posteriori: optimistic for the metric, as Table 3's threshold is).
    """
    columns = ["corpus", "predictor", "n_rows", "n_judges", "auc", "kappa", "threshold"]
    votes = votes[votes["vote"].notna()]
    if votes.empty or votes["judge"].nunique() < 2:
        return pd.DataFrame(columns=columns), [
            "Fewer than two judges: there is no human ceiling to place metrics against."
        ]
    totals = votes.groupby("pair_id")["vote"].agg(["sum", "count"])
    rows = votes.join(totals, on="pair_id")
    others_yes, others_n = rows["sum"] - rows["vote"], rows["count"] - 1
    rows = rows.assign(target=(2 * others_yes > others_n).astype(float))
    rows = rows[(others_n > 0) & (2 * others_yes != others_n)]
    judged = frame[frame["pair_id"].isin(rows["pair_id"].unique())]  # not every pair: 400,000 take a while to index
    pairs = judged.drop_duplicates("pair_id").set_index("pair_id")
    rows = rows.join(pairs[["corpus", *metrics]], on="pair_id", how="inner")
    stats = []
    for corpus, part in subsets(rows):
        y = part["target"].to_numpy(float) == 1
        if not len(part) or y.all() or not y.any():
            continue
        vote = part["vote"].to_numpy(float)
        ordinal = part["ordinal"].to_numpy(float)
        known = ~np.isnan(ordinal)
        stats.append(
            {
                "corpus": corpus,
                "predictor": "held_out_judge",
                "n_rows": len(part),
                "n_judges": int(part["judge"].nunique()),
                "auc": _auc(ordinal[known], y[known]),
                "kappa": cohen_kappa(vote == 1, y),
                "threshold": np.nan,
            }
        )
        for metric in metrics:
            scored = part[metric].notna().to_numpy()
            o = orient(part[metric].to_numpy(float)[scored], directions[metric])
            kappa, threshold = best_kappa(o, y[scored])
            stats.append(
                {
                    "corpus": corpus,
                    "predictor": metric,
                    "n_rows": int(scored.sum()),
                    "n_judges": int(part.loc[scored, "judge"].nunique()),
                    "auc": _auc(o, y[scored]),
                    "kappa": kappa,
                    "threshold": threshold if directions[metric] == "higher" else -threshold,
                }
            )
    notes = [] if stats else ["No pair has two judges with a majority among the others: no human ceiling yet."]
    return pd.DataFrame(stats, columns=columns), notes


def _auc(scores, labels):
    if not len(scores) or labels.all() or not labels.any():
        return np.nan
    return float(resampling.auc(scores, labels)(np.ones((len(scores), 1), dtype=np.int32))[0])


def cohen_kappa(predicted, actual) -> float:
    predicted, actual = np.asarray(predicted, bool), np.asarray(actual, bool)
    n = len(actual)
    if not n:
        return np.nan
    observed = np.mean(predicted == actual)
    expected = np.mean(predicted) * np.mean(actual) + np.mean(~predicted) * np.mean(~actual)
    return float((observed - expected) / (1 - expected)) if expected < 1 else np.nan


def best_kappa(oriented, labels) -> tuple[float, float]:
    """The best Cohen's kappa over every threshold (score >= t: paraphrase) and the strictest t reaching it."""
    if not len(oriented) or labels.all() or not labels.any():
        return np.nan, np.nan
    order = np.argsort(-oriented, kind="stable")
    s, y = oriented[order], labels[order]
    last = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
    tp = np.cumsum(y)[last].astype(float)
    fp = (last + 1 - tp).astype(float)
    n, positives = len(y), float(y.sum())
    tn = n - positives - fp
    observed = (tp + tn) / n
    predicted_yes = (tp + fp) / n
    expected = predicted_yes * positives / n + (1 - predicted_yes) * (1 - positives / n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)
    if np.isnan(kappa).all():
        return np.nan, np.nan
    best = int(np.nanargmax(kappa))
    return float(kappa[best]), float(s[last[best]])


# --- Calibration ---------------------------------------------------------------------------------------


def is_log_odds(metric) -> bool:
    """A metric whose score is a log-odds (ParaPLUIE: log p(yes) - log p(no)): its own probability is sigmoid(score)."""
    return natural_threshold_of(metric) == LOG_ODDS_EVEN


def calibrated_probabilities(oriented, labels, seed, folds=FOLDS) -> np.ndarray:
    """Cross-fitted Platt scaling: each pair's probability from a logistic fit on the other folds' pairs
    (folds stratified by class, seeded)."""
    labels = np.asarray(labels, bool)
    k = min(folds, int(labels.sum()), int((~labels).sum()))
    probabilities = np.full(len(labels), np.nan)
    if k < 2:
        return probabilities
    rng = np.random.default_rng(seed)
    fold = np.empty(len(labels), dtype=int)
    for cls in (True, False):
        members = np.flatnonzero(labels == cls)
        fold[rng.permutation(members)] = np.arange(len(members)) % k
    centre, scale = oriented.mean(), oriented.std() or 1.0
    x = (oriented - centre) / scale
    for held_out in range(k):
        train = fold != held_out
        fit_on = np.flatnonzero(train)
        if len(fit_on) > PLATT_MAX_PAIRS:  # two parameters: a seeded sample pins them as well, at a bounded cost
            fit_on = rng.choice(fit_on, PLATT_MAX_PAIRS, replace=False)
        a, b = platt(x[fit_on], labels[fit_on])
        probabilities[~train] = special.expit(a * x[~train] + b)
    return probabilities


def platt(x, y, iterations=50, ridge=1e-6) -> tuple[float, float]:
    """The logistic fit P(y | x) = sigmoid(a x + b) by Newton's method (maximum likelihood, a tiny ridge on a
    so that separable classes stay finite)."""
    y = np.asarray(y, float)
    a, b = 0.0, float(special.logit(np.clip(y.mean(), 1e-6, 1 - 1e-6)))
    for _ in range(iterations):
        p = special.expit(a * x + b)
        w = p * (1 - p)
        # Sums by numpy, not BLAS dot products: a multi-threaded BLAS splits a long dot product between its
        # threads, so its last bits (and the probabilities) would hang on how many threads the process has.
        gradient = np.array([(x * (y - p)).sum() - ridge * a, np.sum(y - p)])
        wx = w * x
        sum_wx = wx.sum()
        hessian = np.array([[(wx * x).sum() + ridge, sum_wx], [sum_wx, w.sum()]])
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            break
        a, b = a + step[0], b + step[1]
        if np.abs(step).max() < 1e-9:
            break
    return float(a), float(b)


def _bins(probabilities):
    """Each probability's bin, as small integers: their stable sort is a radix sort (an int64's a merge sort,
    five times as long on 400,000 pairs)."""
    return np.minimum((probabilities * N_BINS).astype(int), N_BINS - 1).astype(np.int8)


class _CalibrationKernel:
    """Brier, ECE and average precision of one set of probabilities, for each column of weights (pairs x resamples).

    The sort by probability, its runs and the pairs' grouping by bin are made once and serve every chunk of
    resamples (and the observed sample, all weights one).
    """

    def __init__(self, p, y, bins):
        self.squared_error = (p - y) ** 2
        # The pairs grouped by bin (a stable sort), each non-empty bin's first position: ECE's sums by bin are
        # one reduceat, summed in an order fixed by the data (a BLAS product's would hang on its threads).
        self.by_bin = np.argsort(bins, kind="stable")
        self.bin_starts = np.flatnonzero(np.r_[True, np.diff(bins[self.by_bin]) != 0])
        self.gap_by_bin = (p - y)[self.by_bin][:, None]
        # Only the ends of runs of equal probabilities are read: the order inside a run does not matter.
        self.order = np.argsort(-p)
        s = p[self.order]
        self.last = np.flatnonzero(np.r_[s[1:] != s[:-1], True])
        self.positive_sorted = (y[self.order] == 1)[:, None]

    def __call__(self, weights):
        w = weights.astype(float)
        total = w.sum(axis=0)
        # Per bin, its predicted probabilities' sum less its paraphrases' (weighted): |confidence - accuracy|.
        gap = np.add.reduceat(w[self.by_bin] * self.gap_by_bin, self.bin_starts, axis=0)
        # A resample that drew none of these pairs (a corpus of a few pairs) has no Brier score or ECE: NaN,
        # which the interval's quantiles leave out, without a warning in the log for each such draw.
        with np.errstate(invalid="ignore", divide="ignore"):
            brier = (w * self.squared_error[:, None]).sum(axis=0) / total
            ece = np.abs(gap).sum(axis=0) / total
        return brier, ece, self._average_precision(weights)

    def _average_precision(self, weights):
        """Average precision (scikit-learn's: sum of (R_k - R_k-1) P_k over the distinct thresholds) per column."""
        w_sorted = weights[self.order]
        kind = resampling.count_sum_type(weights)
        tp = running_sums(w_sorted * self.positive_sorted, kind)[self.last + 1].astype(float)
        seen = running_sums(w_sorted, kind)[self.last + 1].astype(float)
        positives = tp[-1]
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = np.where(seen > 0, tp / seen, 0)
            recall = tp / positives
        steps = np.diff(np.vstack([np.zeros((1, weights.shape[1])), recall]), axis=0)
        return (steps * precision).sum(axis=0)


def calibration(frame, metrics, directions, *, n_bootstrap=1000, seed=2024):
    """(calibration, reliability, notes): per metric and corpus, Brier, ECE and PR AUC [95% bootstrap intervals]
    of its probability of paraphrase, and its reliability bins.

    A log-odds metric (ParaPLUIE) is read as it stands, sigmoid(score), and again calibrated; every other
    metric only calibrated (cross-fitted Platt scaling, `calibrated_probabilities`): a distance is not a
    probability. Above BOOTSTRAP_MAX_PAIRS labelled pairs, Brier's interval is the normal one, ECE's and
    PR AUC's are left out (n_bootstrap 0).
    """
    columns = [
        "metric", "corpus", "probability", "n", "base_rate", "brier", "brier_ci_low", "brier_ci_high", "ece",
        "ece_ci_low", "ece_ci_high", "pr_auc", "pr_auc_ci_low", "pr_auc_ci_high", "n_bootstrap",
    ]  # fmt: skip
    bin_columns = ["metric", "corpus", "probability", "bin", "bin_low", "bin_high", "n", "mean_predicted", "observed"]
    rows, bins_rows, notes = [], [], []
    for corpus, part in subsets(frame[frame["paraphrase"].notna()]):
        for metric in metrics:
            scored = part[part[metric].notna()]
            y = scored["paraphrase"].to_numpy(dtype=float) == 1
            if len(scored) < 2 * FOLDS or y.all() or not y.any():
                continue
            oriented = orient(scored[metric].to_numpy(float), directions[metric])
            kinds = {}
            if is_log_odds(metric):
                kinds["sigmoid"] = special.expit(scored[metric].to_numpy(float))
            kinds["calibrated"] = calibrated_probabilities(oriented, y, seed)
            for kind, p in kinds.items():
                keep = ~np.isnan(p)
                row, bin_rows = _calibration_row(p[keep], y[keep], n_bootstrap, seed)
                rows.append({"metric": metric, "corpus": corpus, "probability": kind, **row})
                bins_rows += [{"metric": metric, "corpus": corpus, "probability": kind, **b} for b in bin_rows]
    if not rows and metrics:
        notes.append("Too few labelled pairs of both classes to calibrate the metrics (10 at least).")
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(bins_rows, columns=bin_columns), notes


def _calibration_row(p, y, n_bootstrap, seed):
    yf = y.astype(float)
    bins = _bins(p)
    kernel = _CalibrationKernel(p, yf, bins)
    brier, ece, ap = (float(v[0]) for v in kernel(np.ones((len(p), 1))))
    row = {"n": len(p), "base_rate": float(yf.mean()), "brier": brier, "ece": ece, "pr_auc": ap}
    if len(p) > BOOTSTRAP_MAX_PAIRS:
        half = Z95 * np.std((p - yf) ** 2, ddof=1) / np.sqrt(len(p))
        row.update(brier_ci_low=brier - half, brier_ci_high=brier + half, n_bootstrap=0)
    else:
        draws = [kernel(w) for w in resampling.pair_weights(len(p), n_bootstrap, seed)]
        for position, name in enumerate(("brier", "ece", "pr_auc")):
            values = np.concatenate([d[position] for d in draws]) if draws else np.empty(0)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = _percentile(values)
        row["n_bootstrap"] = n_bootstrap
    # Each bin's pairs in their order (the kernel's stable sort by bin): the same values, summed in the same
    # order, as selecting them bin by bin.
    by_bin = kernel.by_bin
    bounds = np.searchsorted(bins[by_bin], np.arange(N_BINS + 1))
    p_by_bin, y_by_bin = p[by_bin], yf[by_bin]
    bin_rows = []
    for b in range(N_BINS):
        inside = slice(bounds[b], bounds[b + 1])
        count = int(bounds[b + 1] - bounds[b])
        bin_rows.append(
            {
                "bin": b,
                "bin_low": b / N_BINS,
                "bin_high": (b + 1) / N_BINS,
                "n": count,
                "mean_predicted": float(p_by_bin[inside].mean()) if count else np.nan,
                "observed": float(y_by_bin[inside].mean()) if count else np.nan,
            }
        )
    return row, bin_rows
