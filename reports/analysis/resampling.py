"""Statistics of resampled pairs, one column per resample: the kernels the meta-evaluation's tests share.

A resample is a column of weights, one count per pair (how often the pair was drawn), so a
statistic of many resamples is a few matrix operations over one sort. Each kernel gives on
weights what its scipy or scikit-learn counterpart gives on the sample with each pair repeated
as often as it was drawn (the tests check it on such expanded samples).
"""

import numpy as np
from scipy.linalg import blas

from reports.analysis.common import running_sums
from reports.analysis.rank_correlation import Ranks
from reports.analysis.ranking import _AucKernel, bootstrap_indices, resample_counts
from reports.analysis.systems import source_weights

CHUNK_CELLS = 2_000_000  # pairs x resamples at once, to bound memory


def pair_weights(n: int, n_resamples: int, seed: int, *, groups=None):
    """Bootstrap weights (pairs x resamples), in chunks: pairs drawn with replacement, or, with `groups`
    (each pair's group code: its source), whole groups drawn and every pair of a group given its count."""
    if groups is None:
        for indices in bootstrap_indices(n, n_resamples, seed):
            yield resample_counts(indices, n)
        return
    groups = np.asarray(groups)
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    for draws in source_weights(n_groups, n_resamples, seed, chunk=chunk):
        yield np.ascontiguousarray(draws[:, groups].T.astype(np.int32))


def auc(oriented, labels):
    """The AUC kernel of one metric: weights (pairs x resamples) -> AUC per resample."""
    return _AucKernel(np.nan_to_num(oriented), labels)


class _Midranks:
    """Average ranks of one variable in each resample: one sort, then cumulative weights along it.

    The target's are asked for once per metric on the same chunk of resamples: each is kept for the last
    chunk it was computed on.
    """

    def __init__(self, values):
        ranks = Ranks(values)
        self.order = ranks.order
        sorted_codes = ranks.codes[self.order]
        self.starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        self.ends = np.r_[self.starts[1:], len(sorted_codes)]
        self.run_of_sorted = np.repeat(np.arange(len(self.starts)), self.ends - self.starts)
        self.codes, self.n_values = ranks.codes, ranks.n_values
        self.one_value_a_run = len(self.starts) == len(self.order)  # no ties: the usual case for a score
        self._kept = {}

    def _once(self, name, weights, compute):
        kept = self._kept.get(name)
        if kept is None or kept[0] is not weights:
            kept = self._kept[name] = (weights, compute(weights))
        return kept[1]

    def runs(self, weights):
        """(before, through, weight) of each run of equal values in each resample (runs x resamples): the weight
        of the pairs sorted before the run, that with the run's own, and the run's own."""
        return self._once("runs", weights, self._runs)

    def _runs(self, weights):
        # Counts are summed as 32-bit integers (exact, and half the memory traffic of floats).
        in_order = weights[self.order]
        cumulative = running_sums(in_order, count_sum_type(weights))
        if self.one_value_a_run:
            return cumulative[:-1], cumulative[1:], in_order
        before, through = cumulative[self.starts], cumulative[self.ends]
        return before, through, through - before

    def run_ranks(self, weights):
        """Each run's average rank in each resample (runs x resamples): (before + through + 1) / 2."""
        before, through, _weight = self.runs(weights)
        ranks = before + through
        ranks += 1
        return ranks * 0.5

    def weighted_ranks(self, weights):
        """Each pair's weight times its average rank (pairs x resamples)."""
        return self._once("weighted ranks", weights, self._weighted_ranks)

    def _weighted_ranks(self, weights):
        ranks = np.empty(weights.shape)
        ranks[self.order] = self.run_ranks(weights)[self.run_of_sorted]
        ranks *= weights
        return ranks


def count_sum_type(weights):
    """The type cumulative sums of `weights` are summed in: int32 for counts (exact: a resample's total is its
    number of pairs, at most BOOTSTRAP_MAX_PAIRS; half the memory traffic of floats), float for anything else."""
    return np.int32 if weights.dtype.kind in "iu" else float


def _squared_deviations(total, run_weight):
    """Sum over the resample of (rank - mean rank)^2 for N pairs in runs of weight t: (N^3 - sum(t^3)) / 12, the
    midranks' variance with ties ((N^3 - N - sum(t^3 - t)) / 12, the runs' weights summing to N), exact."""
    return (total * total * total - _power_sum(run_weight, 3)) / 12


def _power_sum(weight, power):
    """The sum down each column of weight ** power: counts in 64-bit integers (exact), other weights in floats."""
    kind = np.int64 if weight.dtype.kind in "iu" else float
    return np.einsum(",".join(["ij"] * power) + "->j", *[weight] * power, dtype=kind).astype(float)


class Spearman:
    """Spearman's rho of one metric against the target in each resample (scipy.stats.spearmanr's, on ranks).

    The Pearson correlation of the two midranks, with what needs no pass over the pairs read off the run
    weights: both mean ranks are (N + 1) / 2, and each sum of squared deviations is the ties' closed form.
    Only the cross product sum(w x y) is summed pair by pair, as the sum over the metric's runs of the run's
    rank times its pairs' sum of w y (w y, the target's, is shared by every metric). Every term is a
    multiple of 1/4 below 2^50: exact.
    """

    def __init__(self, oriented, target_ranks: "_Midranks"):
        self.x, self.y = _Midranks(np.nan_to_num(oriented)), target_ranks

    def __call__(self, weights):
        x, y = self.x, self.y
        in_order = y.weighted_ranks(weights)[x.order]
        per_run = in_order if x.one_value_a_run else _run_totals(in_order, x.starts, x.ends)
        before, through, x_weight = x.runs(weights)
        total = weights.sum(axis=0, dtype=float)
        # sum(w x y) = sum over runs of (before + through + 1) / 2 times the run's sum of w y, the last of which
        # add up to the sum of w y = N (N + 1) / 2.
        cross = (np.einsum("ij,ij->j", before + through, per_run) + total * (total + 1) / 2) / 2
        covariance = cross - total * (total + 1) ** 2 / 4
        deviations = _squared_deviations(total, x_weight) * _squared_deviations(total, y.runs(weights)[2])
        with np.errstate(invalid="ignore", divide="ignore"):
            return covariance / np.sqrt(deviations)


# Up to this many pairs Kendall's discordant pairs are one matrix product (pairs x pairs, float32: 25 MB at most).
MATRIX_MAX_PAIRS = 2_500
# float32 adds integers exactly up to 2**24: a column of weights summing to more is counted in float64.
FLOAT32_EXACT = 2**24


class Kendall:
    """Kendall's tau-b of one metric against the target in each resample (scipy.stats.kendalltau's).

    Every count is an integer (a sum of products of counts), so it is exact whichever way it is summed.
    Ties: the weight of each run of equal scores, of each level of the target, and of each cell (a run at a
    level). Discordant pairs: up to MATRIX_MAX_PAIRS pairs, w' D w with D[i, j] = 1 where pair j scores
    strictly lower than pair i at a strictly higher level (one matrix product for every resample); above,
    level by level of the target (few values: a 0/1 label, a mean 4-point answer), the weight of pairs at
    higher levels with a strictly lower score read off one cumulative sum along the score's order.
    """

    def __init__(self, oriented, target_ranks: "_Midranks"):
        self.x = _Midranks(np.nan_to_num(oriented))
        self.target = target_ranks
        self.levels = target_ranks.codes[self.x.order]  # the target's level of each pair, in the score's order
        self.n_levels = target_ranks.n_values
        self.discordance = None
        if 0 < len(self.levels) <= MATRIX_MAX_PAIRS:
            runs, levels = self.x.run_of_sorted, self.levels
            lower_and_above = (runs[None, :] < runs[:, None]) & (levels[None, :] > levels[:, None])
            self.discordance = lower_and_above.astype(np.float32)
            # Pairs (in the score's order) grouped by cell, summed cell by cell; not at all where each cell is one pair
            # (no two pairs tied on the score at one level: the usual case), whose weights are then the cells'.
            self.by_cell, self.cell_starts = _groups(runs * self.n_levels + levels)
            self.cell_ends = np.r_[self.cell_starts[1:], len(levels)]
            self.one_pair_a_cell = len(self.cell_starts) == len(levels)
            self.one_pair_a_run = len(self.x.starts) == len(levels)

    def __call__(self, weights):
        if self.discordance is None:
            w = weights[self.x.order].astype(float)
            total = w.sum(axis=0)
            return self._level_by_level(w, total * (total - 1) / 2)
        w = weights[self.x.order]
        total = w.sum(axis=0, dtype=float)
        pairs = total * (total - 1) / 2
        each_pair = _tied(w, total) if self.one_pair_a_cell or self.one_pair_a_run else None
        x_ties = each_pair if self.one_pair_a_run else _tied(self.x.runs(weights)[2], total)
        y_ties = _tied(self.target.runs(weights)[2], total)  # the target's runs are its levels; shared by every metric
        if self.one_pair_a_cell:
            joint_ties = each_pair
        else:
            joint_ties = _tied(_run_totals(w[self.by_cell], self.cell_starts, self.cell_ends), total)
        if total.max() < FLOAT32_EXACT and w.dtype.kind in "iu":
            w32 = w.astype(np.float32)
            lower = _lower_triangular_product(self.discordance, w32)
            # Each sum below is an integer under total^2 / 2: exact in float32 while that stays under 2^24.
            exact32 = total.max() ** 2 / 2 < FLOAT32_EXACT
            discordant = np.einsum("ij,ij->j", w32, lower, dtype=np.float32 if exact32 else float)
        else:
            w = w.astype(float)
            discordant = (w * (self.discordance.astype(float) @ w)).sum(axis=0)
        return _tau_b(pairs, x_ties, y_ties, joint_ties, discordant)

    def _level_by_level(self, w, pairs):
        x, levels = self.x, self.levels
        run_weight = np.add.reduceat(w, x.starts, axis=0) if len(w) else np.zeros((0, w.shape[1]))
        x_ties = (run_weight * (run_weight - 1) / 2).sum(axis=0)
        y_ties = np.zeros(w.shape[1])
        joint_ties = np.zeros(w.shape[1])
        discordant = np.zeros(w.shape[1])
        above = np.zeros((len(w) + 1, w.shape[1]))
        for level in range(self.n_levels - 1, -1, -1):
            at = levels == level
            at_weight = w * at[:, None]
            level_total = at_weight.sum(axis=0)
            y_ties += level_total * (level_total - 1) / 2
            cell = np.add.reduceat(at_weight, x.starts, axis=0)
            joint_ties += (cell * (cell - 1) / 2).sum(axis=0)
            # Pairs at a higher level with a strictly lower score: the cumulative weight before the score's run.
            below = above[x.starts][x.run_of_sorted]
            discordant += (at_weight * below).sum(axis=0)
            above += running_sums(at_weight)
        return _tau_b(pairs, x_ties, y_ties, joint_ties, discordant)


def _lower_triangular_product(lower, columns):
    """lower @ columns for a lower triangular float32 `lower` (pairs in the score's order: a pair is discordant
    only with pairs sorted before it) and C-ordered float32 `columns`: BLAS's triangular product, half the
    work of a general one. In Fortran's view the two arrays are their transposes, so the product is asked
    as columns' @ lower' (`side=1`, an upper triangular factor), and nothing is copied."""
    return blas.strmm(1.0, lower.T, columns.T, side=1, lower=0).T


def _run_totals(values, starts, ends):
    """The sums of `values` (rows x resamples) over each run of rows [start, end): differences of running sums,
    3-4x faster than np.add.reduceat along the rows, and exact for what is summed here (counts, and multiples
    of 1/2 under 2^50)."""
    sums = running_sums(values)
    return sums[ends] - sums[starts]


def _tied(weight, total):
    """Pairs tied within each run (runs x resamples of run weights t, summing to `total`): the sum of t (t - 1) / 2."""
    return (_power_sum(weight, 2) - total) / 2


def _groups(keys):
    """The positions sorted by key (stable) and where each key's group starts among them."""
    order = np.argsort(keys, kind="stable")
    return order, np.flatnonzero(np.r_[True, np.diff(keys[order]) != 0])


def _tau_b(pairs, x_ties, y_ties, joint_ties, discordant):
    concordant_minus = pairs - x_ties - y_ties + joint_ties - 2 * discordant
    with np.errstate(invalid="ignore", divide="ignore"):
        return concordant_minus / np.sqrt(pairs - x_ties) / np.sqrt(pairs - y_ties)


def target_ranks(target):
    return _Midranks(np.asarray(target, dtype=float))
