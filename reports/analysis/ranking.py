"""Beyond the paper: ROC AUC with bootstrap CIs, paired bootstrap tests, rank correlation with the judges.

Bootstrap resamples are drawn once per corpus over its labelled pairs and shared by every
metric, so two metrics' AUCs are compared on the very same resamples (paired test). A
resample is kept as counts per pair (weights), which turns each AUC into one sort and a
few cumulative sums; a pair a metric has not scored gets weight 0.
"""

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import special

from reports.analysis.common import ascending_order, orient, running_sums, suborder, subset_masks
from reports.analysis.rank_correlation import Ranks, kendall_tau_b, spearman

CHUNK_CELLS = 2_000_000  # resamples x pairs processed at once, to bound memory
# Above this many labelled pairs in a subset, the bootstrap (B x n work) gives way to
# DeLong's variance (one sort per metric); at that size both give the same CIs to 3 decimals.
BOOTSTRAP_MAX_PAIRS = 20_000


def bootstrap_indices(n: int, n_bootstrap: int, seed: int):
    """Resampled positions (with replacement), yielded in chunks of rows; the same seed gives the same rows."""
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, n_bootstrap, chunk):
        yield rng.integers(0, n, size=(min(chunk, n_bootstrap - start), n))


def weighted_auc(oriented: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """ROC AUC for each column of `weights` (pairs x resamples, counts per pair); ties count one half.

    NaN where a class weighs 0. For each paraphrase, the weight of the non-paraphrases
    scored below it (and half of those tied with it) is read off one cumulative sum over
    the non-paraphrases in score order.
    """
    return _AucKernel(oriented, labels)(weights)


class _AucKernel:
    """The sort and the search of one metric's scores, reused for every chunk of resamples."""

    def __init__(self, oriented, labels):
        labels = np.asarray(labels, dtype=bool)
        negatives = np.flatnonzero(~labels)
        self.negatives = negatives[np.argsort(oriented[negatives], kind="stable")]
        self.positives = np.flatnonzero(labels)
        negative_scores = oriented[self.negatives]
        positive_scores = oriented[self.positives]
        self.below = np.searchsorted(negative_scores, positive_scores, side="left")
        self.at_or_below = np.searchsorted(negative_scores, positive_scores, side="right")
        self.has_ties = bool((self.below != self.at_or_below).any())

    def __call__(self, weights):
        # Pairs are rows, so every gather below copies whole contiguous rows.
        weights = np.asarray(weights)
        integer = weights.dtype.kind in "iu"
        cumulative = running_sums(weights[self.negatives], np.int32 if integer else float)
        positive_weights = weights[self.positives]
        if self.has_ties:
            twice_below = cumulative[self.below] + cumulative[self.at_or_below]
        else:
            twice_below = 2 * cumulative[self.below]
        numerator = np.einsum("ij,ij->j", positive_weights, twice_below, dtype=float) / 2
        denominator = positive_weights.sum(axis=0, dtype=float) * cumulative[-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """Pairs x resamples matrix: how often each pair was drawn in each row of `indices`."""
    rows = len(indices)
    counts = np.bincount((indices * rows + np.arange(rows)[:, None]).ravel(), minlength=n * rows)
    return counts.reshape(n, rows).astype(np.int32)


def _bootstrap_aucs(oriented_by_metric, labels, n_bootstrap, seed):
    """Observed AUC and bootstrap AUCs (n_bootstrap,) of each metric on one set of pairs."""
    n = len(labels)
    kernels, masks = {}, {}
    for metric, o in oriented_by_metric.items():
        scored = ~np.isnan(o)
        kernels[metric] = _AucKernel(np.nan_to_num(o), labels)
        masks[metric] = None if scored.all() else scored.astype(np.int32)[:, None]
    observed = {m: kernels[m](np.ones((n, 1), dtype=np.int32) if masks[m] is None else masks[m])[0] for m in kernels}
    resampled = {m: [] for m in kernels}
    for indices in bootstrap_indices(n, n_bootstrap, seed):
        counts = resample_counts(indices, n)
        for metric, kernel in kernels.items():
            resampled[metric].append(kernel(counts if masks[metric] is None else counts * masks[metric]))
    return observed, {m: np.concatenate(v) if v else np.empty(0) for m, v in resampled.items()}


def auc_tables(frame: pd.DataFrame, metrics, directions, *, n_bootstrap=1000, seed=2024, orders=None):
    """(auc, auc_tests): AUC with percentile 95% CI per metric and corpus; paired tests of every two metrics.

    The test's p-value is two-sided, from the bootstrap differences centred on their mean:
    (1 + #{|d_b - mean(d)| >= |d_observed|}) / (1 + B). A subset of more than
    BOOTSTRAP_MAX_PAIRS labelled pairs uses DeLong's method instead (`n_bootstrap` 0).
    `orders`: the metrics' `common.ScoreOrders` on `frame`, when sorted already.
    """
    auc_rows, test_rows = [], []
    labelled = frame["paraphrase"].notna().to_numpy()
    every_label = frame["paraphrase"].to_numpy(dtype=float, na_value=np.nan)[labelled] == 1
    every_score = {m: orient(frame[m].to_numpy(dtype=float, na_value=np.nan)[labelled], directions[m]) for m in metrics}
    # DeLong's counts read no order inside a run of ties: one sort of each metric's labelled scores serves
    # every corpus (`suborder`), made when a corpus first needs it.
    orders_of_all = {}
    for corpus, members in subset_masks(frame):
        in_corpus = np.ones(len(every_label), dtype=bool) if members is None else members[labelled]
        labels = every_label[in_corpus]
        oriented = {m: scores[in_corpus] for m, scores in every_score.items()}
        oriented = {m: scores for m, scores in oriented.items() if (~np.isnan(scores)).any()}
        if not oriented:
            continue
        if len(labels) > BOOTSTRAP_MAX_PAIRS:
            for m in oriented.keys() - orders_of_all.keys():
                orders_of_all[m] = ascending_order(every_score[m], orders, m, labelled)
            corpus_orders = {m: suborder(orders_of_all[m], in_corpus) for m in oriented}
            aucs, tests = delong_tables(oriented, labels, corpus_orders)
            auc_rows += [{"corpus": corpus, **row} for row in aucs]
            test_rows += [{"corpus": corpus, **row} for row in tests]
            continue
        aucs, tests = _bootstrap_tables(oriented, labels, n_bootstrap, seed)
        auc_rows += [{"corpus": corpus, **row} for row in aucs]
        test_rows += [{"corpus": corpus, **row} for row in tests]
    auc_columns = [
        "metric",
        "corpus",
        "auc",
        "ci95_low",
        "ci95_high",
        "n",
        "n_paraphrase",
        "n_non_paraphrase",
        "n_bootstrap",
    ]
    test_columns = ["corpus", "metric_a", "metric_b", "n", "auc_a", "auc_b", "difference", "p_value", "n_bootstrap"]
    return pd.DataFrame(auc_rows, columns=auc_columns), pd.DataFrame(test_rows, columns=test_columns)


def _bootstrap_tables(oriented, labels, n_bootstrap, seed):
    """AUC rows with percentile 95% CIs and paired bootstrap tests of every two metrics, on one set of pairs."""
    auc_rows, test_rows = [], []
    observed, resampled = _bootstrap_aucs(oriented, labels, n_bootstrap, seed)
    for metric, o in oriented.items():
        scored = ~np.isnan(o)
        valid = resampled[metric][~np.isnan(resampled[metric])]
        low, high = np.percentile(valid, [2.5, 97.5]) if len(valid) else (np.nan, np.nan)
        auc_rows.append(
            {
                "metric": metric,
                "auc": observed[metric],
                "ci95_low": low,
                "ci95_high": high,
                "n": int(scored.sum()),
                "n_paraphrase": int(labels[scored].sum()),
                "n_non_paraphrase": int((~labels[scored]).sum()),
                "n_bootstrap": len(valid),
            }
        )
    for a, b in combinations(oriented, 2):
        both = ~np.isnan(oriented[a]) & ~np.isnan(oriented[b])
        if both.all():
            obs_a, obs_b, boot_a, boot_b = observed[a], observed[b], resampled[a], resampled[b]
        else:
            # Paired on the pairs both metrics scored: redo both on those alone.
            pair_obs, pair_boot = _bootstrap_aucs(
                {a: oriented[a][both], b: oriented[b][both]}, labels[both], n_bootstrap, seed
            )
            obs_a, obs_b, boot_a, boot_b = pair_obs[a], pair_obs[b], pair_boot[a], pair_boot[b]
        test_rows.append(
            {
                "metric_a": a,
                "metric_b": b,
                "n": int(both.sum()),
                **paired_p_value(obs_a, obs_b, boot_a, boot_b),
            }
        )
    return auc_rows, test_rows


def _placements(oriented, labels, order=None):
    """DeLong's placement values: per paraphrase, the share of non-paraphrases below it (ties one half),
    and per non-paraphrase, the share of paraphrases above it. `order`: np.argsort(oriented), if made already."""
    n_positives = int(labels.sum())
    n_negatives = len(labels) - n_positives
    (below, at_or_below), (under, at_or_under) = _counts_below(oriented, ~labels, labels, order=order)
    v10 = (below[labels] + at_or_below[labels]) / (2 * n_negatives)
    v01 = (2 * n_positives - under[~labels] - at_or_under[~labels]) / (2 * n_positives)
    return v10, v01


def _counts_below(values, *counted_masks, order=None):
    """Per mask, for each value: how many masked values are below it, and how many at or below it.

    One sort of all the values (`order`, if made already), then counts at the ends of each run of equal
    values: the same integers as searching each value among the sorted masked values, without the slow
    search. Counts are per run, so the order inside a run does not matter: the fast unstable sort will do.
    """
    order = np.argsort(values) if order is None else order
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    ends = np.r_[starts[1:], len(values)]
    run_of_position = np.repeat(np.arange(len(starts)), ends - starts)
    counts = []
    for counted in counted_masks:
        counted_before = np.r_[0, np.cumsum(counted[order])]  # masked values among the first i in order
        below, at_or_below = np.empty(len(values), dtype=np.intp), np.empty(len(values), dtype=np.intp)
        below[order] = counted_before[starts][run_of_position]
        at_or_below[order] = counted_before[ends][run_of_position]
        counts.append((below, at_or_below))
    return counts


def _delong(oriented_by_metric, labels, orders=None):
    """AUCs and their covariance matrix (DeLong, DeLong & Clarke-Pearson 1988) on the same pairs.
    `orders`: each metric's sort of its scores (np.argsort's, or any: runs of ties are read at their ends), if made."""
    names = list(oriented_by_metric)
    orders = orders or {}
    placements = [_placements(oriented_by_metric[m], labels, orders.get(m)) for m in names]
    v10 = np.array([p[0] for p in placements])
    v01 = np.array([p[1] for p in placements])
    aucs = v10.mean(axis=1)
    covariance = np.atleast_2d(np.cov(v10)) / v10.shape[1] + np.atleast_2d(np.cov(v01)) / v01.shape[1]
    return dict(zip(names, aucs)), covariance


def delong_tables(oriented_by_metric, labels, orders=None):
    """AUC rows with normal 95% CIs and paired z-tests of every two metrics, each on the pairs it scored.

    Metrics that scored every pair share one covariance matrix; the others are redone on their pairs.
    `orders`: each metric's sort of its scores (np.argsort's, or any: runs of ties are read at their ends), if made.
    """
    complete = [m for m, o in oriented_by_metric.items() if not np.isnan(o).any()]
    joint = _delong({m: oriented_by_metric[m] for m in complete}, labels, orders) if complete else ({}, None)

    def aucs_and_covariance(names, keep):
        if all(name in joint[0] for name in names):
            index = [complete.index(name) for name in names]
            return [joint[0][name] for name in names], joint[1][np.ix_(index, index)]
        aucs, covariance = _delong({name: oriented_by_metric[name][keep] for name in names}, labels[keep])
        return [aucs[name] for name in names], covariance

    auc_rows, test_rows = [], []
    for metric, o in oriented_by_metric.items():
        scored = ~np.isnan(o)
        row = {
            "metric": metric,
            "n": int(scored.sum()),
            "n_paraphrase": int(labels[scored].sum()),
            "n_non_paraphrase": int((~labels[scored]).sum()),
            "n_bootstrap": 0,
        }
        if row["n_paraphrase"] and row["n_non_paraphrase"]:
            (auc,), covariance = aucs_and_covariance([metric], scored)
            half = 1.959964 * np.sqrt(covariance[0, 0])
            row.update(auc=auc, ci95_low=auc - half, ci95_high=auc + half)
        auc_rows.append(row)
    for a, b in combinations(oriented_by_metric, 2):
        both = ~np.isnan(oriented_by_metric[a]) & ~np.isnan(oriented_by_metric[b])
        row = {"metric_a": a, "metric_b": b, "n": int(both.sum()), "n_bootstrap": 0}
        if labels[both].any() and not labels[both].all():
            (auc_a, auc_b), s = aucs_and_covariance([a, b], both)
            variance = s[0, 0] + s[1, 1] - 2 * s[0, 1]
            difference = auc_a - auc_b
            p = 2 * special.ndtr(-abs(difference) / np.sqrt(variance)) if variance > 0 else float(difference == 0)
            row.update(auc_a=auc_a, auc_b=auc_b, difference=difference, p_value=float(p))
        test_rows.append(row)
    return auc_rows, test_rows


def paired_p_value(auc_a, auc_b, boot_a, boot_b) -> dict[str, float]:
    differences = np.asarray(boot_a) - np.asarray(boot_b)
    differences = differences[~np.isnan(differences)]
    observed = auc_a - auc_b
    if len(differences) == 0 or np.isnan(observed):
        p = np.nan
    else:
        p = (1 + np.sum(np.abs(differences - differences.mean()) >= abs(observed) - 1e-12)) / (1 + len(differences))
    return {
        "auc_a": auc_a,
        "auc_b": auc_b,
        "difference": observed,
        "p_value": float(p),
        "n_bootstrap": len(differences),
    }


# What the scores are ranked against, per label source: the human report uses the pair's
# mean 4-point answer (finer than the majority label), as do the crowd-aware sources; the gold report the 0/1 label.
RANK_TARGETS = {"human": "mean_ordinal", "gold": "paraphrase", "dawid_skene": "mean_ordinal", "mace": "mean_ordinal"}
# The target as the `against` column of rank_correlation.csv names it (a published file keeps `label`).
AGAINST = {"mean_ordinal": "mean_ordinal", "paraphrase": "label"}


def rank_correlations(
    frame: pd.DataFrame, metrics, directions, label_source="human", orders=None
) -> tuple[pd.DataFrame, list[str]]:
    """Spearman and Kendall (tau-b) of each metric with the labels of `label_source` (see RANK_TARGETS).

    Human labels: the pair's mean ordinal answer (1-4, Don't know left out); gold labels:
    the 0/1 gold label (tau-b and Spearman handle its many ties). Scores are oriented
    (distances negated) so that a positive correlation always means agreement with the
    labels. Pair level: one point per pair with a target value.
    `orders`: the metrics' `common.ScoreOrders` on `frame`, when sorted already.
    """
    rows, notes = [], []
    target = RANK_TARGETS[label_source]
    # Only the columns read below: every selection of rows then copies little.
    columns = ["corpus", target, *metrics]
    judged_rows = frame[target].notna().to_numpy() if target in frame else np.zeros(len(frame), dtype=bool)
    judged = frame.loc[judged_rows, columns] if target in frame else frame.iloc[:0]
    if judged.empty:
        if label_source == "gold":
            notes.append("No gold label: rank correlations with the gold labels are undefined.")
        else:
            notes.append("No judgment on the 4-point scale yet: rank correlations with the judges are undefined.")
    # Each subset's labels are ranked once, shared by every metric that scored all its pairs.
    every_label = judged[target].to_numpy(dtype=float)
    parts = [(corpus, members, every_label if members is None else every_label[members])
             for corpus, members in subset_masks(judged)]  # fmt: skip
    label_ranks = [Ranks(labels) for _, _, labels in parts]
    for metric in metrics:
        every_score = orient(judged[metric].to_numpy(dtype=float), directions[metric])
        scored_at_all = ~np.isnan(every_score)
        # One sort of the metric's scores on every pair serves every corpus (`suborder`): Ranks reads no order
        # inside a run of ties.
        order_of_all = None
        for (corpus, members, labels), ranks_of_labels in zip(parts, label_ranks):
            scored = scored_at_all if members is None else scored_at_all & members
            scores = every_score[scored]
            some_unscored = len(scores) < len(labels)
            if some_unscored:
                labels = labels[scored if members is None else scored[members]]
            row = {"metric": metric, "corpus": corpus, "against": AGAINST[target], "n": len(scores)}
            if len(scores) >= 3 and np.ptp(scores) > 0 and np.ptp(labels) > 0:
                if order_of_all is None:
                    order_of_all = ascending_order(every_score, orders, metric, judged_rows)
                score_ranks = Ranks(scores, order=suborder(order_of_all, scored))
                if some_unscored:
                    ranks_of_labels = Ranks(labels)
                spearman_rho, spearman_p = spearman(score_ranks, ranks_of_labels)
                kendall_tau, kendall_p = kendall_tau_b(score_ranks, ranks_of_labels, scores, labels)
                row.update(
                    spearman_rho=spearman_rho, spearman_p=spearman_p, kendall_tau=kendall_tau, kendall_p=kendall_p
                )
            rows.append(row)
    columns = ["metric", "corpus", "against", "n", "spearman_rho", "spearman_p", "kendall_tau", "kendall_p"]
    return pd.DataFrame(rows, columns=columns), notes
