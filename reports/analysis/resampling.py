"""Statistics of resampled pairs, one column per resample: the kernels the meta-evaluation's tests share.

A resample is a column of weights, one count per pair (how often the pair was drawn), so a
statistic of many resamples is a few matrix operations over one sort. Each kernel gives on
weights what its scipy or scikit-learn counterpart gives on the sample with each pair repeated
as often as it was drawn (the tests check it on such expanded samples).
"""

import numpy as np

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
    """Average ranks of one variable in each resample: one sort, then cumulative weights along it."""

    def __init__(self, values):
        ranks = Ranks(values)
        self.order = ranks.order
        sorted_codes = ranks.codes[self.order]
        self.starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        self.ends = np.r_[self.starts[1:], len(sorted_codes)]
        self.run_of_sorted = np.repeat(np.arange(len(self.starts)), self.ends - self.starts)
        self.codes, self.n_values = ranks.codes, ranks.n_values
        self._last = None

    def __call__(self, weights):
        # The target's ranks are asked for once per metric on the same chunk of resamples: computed once.
        if self._last is not None and self._last[0] is weights:
            return self._last[1]
        # Counts are summed as 32-bit integers (exact, and half the memory traffic of floats).
        cumulative = np.zeros((weights.shape[0] + 1, weights.shape[1]), dtype=count_sum_type(weights))
        np.cumsum(weights[self.order], axis=0, out=cumulative[1:])
        before, through = cumulative[self.starts], cumulative[self.ends]
        run_rank = before + (through - before + 1) / 2
        ranks = np.empty((len(self.order), weights.shape[1]))
        ranks[self.order] = run_rank[self.run_of_sorted]
        self._last = (weights, ranks)
        return ranks


def count_sum_type(weights):
    """The type cumulative sums of `weights` are summed in: int32 for counts (exact: a resample's total is its
    number of pairs, at most BOOTSTRAP_MAX_PAIRS; half the memory traffic of floats), float for anything else."""
    return np.int32 if weights.dtype.kind in "iu" else float


def _weighted_pearson(x, y, weights):
    total = weights.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx, my = (weights * x).sum(axis=0) / total, (weights * y).sum(axis=0) / total
        dx, dy = x - mx, y - my
        covariance = (weights * dx * dy).sum(axis=0)
        return covariance / np.sqrt((weights * dx * dx).sum(axis=0) * (weights * dy * dy).sum(axis=0))


class Spearman:
    """Spearman's rho of one metric against the target in each resample (scipy.stats.spearmanr's, on ranks)."""

    def __init__(self, oriented, target_ranks: "_Midranks"):
        self.x, self.y = _Midranks(np.nan_to_num(oriented)), target_ranks

    def __call__(self, weights):
        return _weighted_pearson(self.x(weights), self.y(weights), weights.astype(float))


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
        self.levels = target_ranks.codes[self.x.order]  # the target's level of each pair, in the score's order
        self.n_levels = target_ranks.n_values
        self.discordance = None
        if 0 < len(self.levels) <= MATRIX_MAX_PAIRS:
            runs, levels = self.x.run_of_sorted, self.levels
            lower_and_above = (runs[None, :] < runs[:, None]) & (levels[None, :] > levels[:, None])
            self.discordance = lower_and_above.astype(np.float32)
            # Pairs (in the score's order) grouped by level, and by cell, for one reduceat each.
            self.by_level, self.level_starts = _groups(levels)
            self.by_cell, self.cell_starts = _groups(runs * self.n_levels + levels)

    def __call__(self, weights):
        w = weights[self.x.order].astype(float)
        total = w.sum(axis=0)
        pairs = total * (total - 1) / 2
        if self.discordance is None:
            return self._level_by_level(w, pairs)
        run_weight = np.add.reduceat(w, self.x.starts, axis=0)
        x_ties = (run_weight * (run_weight - 1) / 2).sum(axis=0)
        level_total = np.add.reduceat(w[self.by_level], self.level_starts, axis=0)
        y_ties = (level_total * (level_total - 1) / 2).sum(axis=0)
        cell = np.add.reduceat(w[self.by_cell], self.cell_starts, axis=0)
        joint_ties = (cell * (cell - 1) / 2).sum(axis=0)
        exact32 = total.max() < FLOAT32_EXACT
        lower = self.discordance @ w.astype(np.float32) if exact32 else self.discordance.astype(float) @ w
        discordant = (w * lower).sum(axis=0)
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
            above[1:] += np.cumsum(at_weight, axis=0)
        return _tau_b(pairs, x_ties, y_ties, joint_ties, discordant)


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
