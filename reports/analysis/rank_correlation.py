"""Spearman's rho and Kendall's tau-b from one sort per variable, to the bit what scipy.stats returns.

scipy's spearmanr and kendalltau sort both variables again on every call (kendalltau twice,
then a merge sort to count discordant pairs). A report ranks nine metrics against the same
labels, so the labels are ranked once per set of pairs and every metric once. Discordant
pairs are counted level by level of the variable with fewer distinct values (the 0/1 gold
label has two, a mean 4-point answer a few dozen): integer counts, the same integers as
scipy's. Every float is then computed with scipy 1.17's own expressions, in its order, so
the statistics and p-values are equal (==) to scipy's, which tests/reports check.
"""

import numpy as np
from scipy import special

from reports.analysis.common import scipy_stats

# Above this many cells (distinct values of one variable times those of the other) the level
# by level count would be slower than scipy's merge sort: scipy then computes Kendall's tau.
MAX_LEVEL_CELLS = 50_000_000


class Ranks:
    """One variable's ranks from one sort: average ranks, dense codes (0, 1, ...) and run lengths."""

    def __init__(self, values, order=None):
        values = np.asarray(values, dtype=float)
        # The order inside a run of ties is never read: the fast unstable sort will do. `order`: that sort,
        # made earlier for the same values.
        self.order = order = np.argsort(values) if order is None else order
        sorted_values = values[order]
        first = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
        starts = np.flatnonzero(first)
        self.counts = np.diff(np.r_[starts, len(values)])
        self.n = len(values)
        self.n_values = len(starts)
        codes_sorted = np.cumsum(first) - 1
        self.codes = np.empty(len(values), dtype=np.intp)
        self.codes[order] = codes_sorted
        # scipy's average rank: ordinal rank of the run's first value + (count - 1) / 2 (exact halves).
        run_ranks = (starts + 1).astype(float) + (self.counts.astype(float) - 1) / 2
        self.average = run_ranks[self.codes]


def spearman(x: Ranks, y: Ranks) -> tuple[float, float]:
    """(rho, two-sided p) as scipy.stats.spearmanr(x, y) for non-constant x and y, n >= 3."""
    # spearmanr correlates its ranks as an n x 2 array laid out column after column: same layout, same floats.
    stacked = np.empty((2, x.n))
    stacked[0], stacked[1] = x.average, y.average
    rs = np.corrcoef(stacked.T, rowvar=False)
    dof = x.n - 2
    with np.errstate(divide="ignore"):
        t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    p = 2 * special.stdtr(dof, -np.abs(t))
    return rs[1, 0], p[1, 0]


def _tie_statistics(counts):
    """scipy's count_rank_tie: tied pairs and the two sums of its variance terms (in float, as scipy)."""
    cnt = counts[counts > 1].astype("int64", copy=False)
    return (
        int((cnt * (cnt - 1) // 2).sum()),
        int((cnt * (cnt - 1.0) * (cnt - 2)).sum()),
        int((cnt * (cnt - 1.0) * (2 * cnt + 5)).sum()),
    )


def _discordant_and_joint_ties(x: Ranks, y: Ranks) -> tuple[int, int]:
    """Pairs ordered one way by x and the other by y (both strictly), and pairs tied in both.

    Taken level by level of the variable with fewer values (y below, after a swap if need
    be): for the pairs at level v, the pairs at a higher level with a lower x are read off a
    running count per x value.
    """
    if x.n_values < y.n_values:
        x, y = y, x
    level_ends = np.cumsum(y.counts)
    x_codes_by_level = x.codes[y.order]
    above = np.zeros(x.n_values, dtype=np.int64)  # per x value: pairs at the levels done so far
    discordant = joint_ties = 0
    for level in range(y.n_values - 1, -1, -1):
        start = level_ends[level - 1] if level else 0
        at_level = np.bincount(x_codes_by_level[start : level_ends[level]], minlength=x.n_values)
        below_x = np.cumsum(above) - above  # higher-level pairs with a strictly lower x
        discordant += int(np.dot(at_level, below_x))
        joint_ties += int((at_level * (at_level - 1) // 2).sum())
        above += at_level
    return discordant, joint_ties


def kendall_tau_b(x: Ranks, y: Ranks, x_values, y_values) -> tuple[float, float]:
    """(tau-b, two-sided p) as scipy.stats.kendalltau(x_values, y_values), for non-constant x and y.

    scipy's exact p-value (no ties, and n <= 33 or at most one pair out of order) and pairs
    with too many distinct values on both sides go to scipy itself.
    """
    size = x.n
    if min(x.n_values, y.n_values) * max(x.n_values, y.n_values) > MAX_LEVEL_CELLS:
        result = scipy_stats().kendalltau(x_values, y_values)
        return result.statistic, result.pvalue
    dis, ntie = _discordant_and_joint_ties(x, y)
    xtie, x0, x1 = _tie_statistics(x.counts)
    ytie, y0, y1 = _tie_statistics(y.counts)
    tot = (size * (size - 1)) // 2
    if xtie == 0 and ytie == 0 and (size <= 33 or min(dis, tot - dis) <= 1):
        result = scipy_stats().kendalltau(x_values, y_values)
        return result.statistic, result.pvalue
    con_minus_dis = tot - xtie - ytie + ntie - 2 * dis
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    tau = np.minimum(1.0, max(-1.0, tau))
    m = size * (size - 1.0)
    var = (m * (2 * size + 5) - x1 - y1) / 18 + (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (size - 2))
    z = con_minus_dis / np.sqrt(var)
    p = 2 * special.ndtr(-np.abs(z))
    return tau[()], p[()]
