"""Helpers shared by the analysis modules: corpora, subsets, oriented scores."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from reports.analysis.labels import GLOBAL

HIGHER, LOWER = "higher", "lower"


def scipy_stats():
    """scipy.stats, imported on first use: half a second (more through scikit-learn) that every process
    importing the analysis would otherwise spend, though most reports compute none of its tests."""
    from scipy import stats

    return stats


ARROW = {HIGHER: "↑", LOWER: "↓"}


def corpora(frame: pd.DataFrame) -> list[str]:
    """Corpus names in order of first appearance."""
    return [str(name) for name in pd.unique(frame["corpus"])]


# From this many columns on, `running_sums` adds row by row (below, numpy's cumsum costs less than the row loop).
ROW_BY_ROW_MIN_COLUMNS = 256


def running_sums(values, dtype=None) -> np.ndarray:
    """0, then the cumulative sums down the rows of `values` (rows x columns): (rows + 1) x columns, in `dtype`.

    Row by row, each a contiguous add: numpy's cumsum along axis 0 walks the columns one by one, 5-10x slower
    once the array outgrows the cache (16 ms against 1.7 ms for 1,050 pairs x 1,000 resamples). The same
    additions in the same order, so the same sums, floats included.
    """
    values = np.asarray(values)
    sums = np.empty((values.shape[0] + 1, *values.shape[1:]), dtype=dtype or values.dtype)
    sums[0] = 0
    if values.ndim == 2 and values.shape[1] >= ROW_BY_ROW_MIN_COLUMNS:
        for i, row in enumerate(values):
            np.add(sums[i], row, out=sums[i + 1])
    else:
        np.cumsum(values, axis=0, dtype=sums.dtype, out=sums[1:])
    return sums


def subsets(frame: pd.DataFrame, order: list[str] | None = None):
    """(name, rows) for each corpus, then Global (every corpus together).

    The corpus names are coded once (the rows of `frame["corpus"] == name`, without comparing
    every string again for each corpus: on 400,000 pairs that was seconds per report).
    `order`: the corpora in the order of a larger frame `frame` was cut from (`corpora` of it), so that
    a cut keeps their order; a corpus the cut lacks is left out.
    """
    for name, rows in subset_masks(frame, order):
        yield name, frame if rows is None else frame[rows]


def subset_masks(frame: pd.DataFrame, order: list[str] | None = None):
    """(name, rows) as `subsets` gives them, each corpus's rows as a boolean mask, Global's as None (every row)."""
    codes, names = pd.factorize(frame["corpus"], sort=False, use_na_sentinel=False)
    coded = list(enumerate(names))
    if order is not None:
        code_of = {str(name): (code, name) for code, name in coded}
        coded = [code_of[name] for name in order if name in code_of]
    for code, name in coded:
        yield str(name), codes == code if name == name else np.zeros(len(frame), dtype=bool)  # NaN equals nothing
    yield GLOBAL, None


def suborder(order, keep) -> np.ndarray:
    """The positions in `values[keep]` in the order `order` (a sort of all the `values`) puts them: the sort of
    a corpus from the sort of every corpus, in one pass. A stable sort's is exactly the stable sort of
    `values[keep]`; an unstable sort's is a sort of it too, ties perhaps in another order (for callers that
    read only the ends of runs of ties)."""
    keep = np.asarray(keep, dtype=bool)
    position = np.cumsum(keep) - 1
    return position[order[keep[order]]]


def orient(values, direction: str) -> np.ndarray:
    """Scores turned so that higher always means closer (a distance is negated)."""
    if direction not in (HIGHER, LOWER):
        raise ValueError(f"direction must be {HIGHER!r} or {LOWER!r}, got {direction!r}")
    values = np.asarray(values, dtype=float)
    return values if direction == HIGHER else -values


def closest_first(oriented) -> np.ndarray:
    """Positions of the oriented scores, highest first, ties (NaN last) in input order.

    The same positions as np.argsort(-oriented, kind="stable"), about twice as fast on large
    corpora: the fast unstable sort, then each run of equal scores put back in input order
    by one sort of (run, position) keys.
    """
    negated = -np.asarray(oriented, dtype=float)
    n = len(negated)
    order = np.argsort(negated)
    in_order = negated[order]
    new_run = in_order[1:] != in_order[:-1]
    new_run &= ~(np.isnan(in_order[1:]) & np.isnan(in_order[:-1]))  # NaN, unequal to itself, is one run
    keys = np.r_[0, np.cumsum(new_run)] * n + order
    keys.sort()
    return keys % n if n else order


def usable_cpus() -> int:
    """The CPUs this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class ScoreOrders:
    """Each metric's oriented scores sorted once (`closest_first`) on some rows of a frame, for every step that
    sorts them: a subset's order is cut from it in one pass (`suborder`), not sorted again.

    A report whose steps are all computed (`Runner.reuses` false: the `report` command) sorts each metric here,
    once, before its step groups are forked, instead of once in each of four groups (Table 3 and the curves,
    the AUCs, the significance clusters, the rank correlations). `rows`: the rows sorted, a boolean mask of the
    frame's rows (default all); a step asks only for rows among them.
    """

    def __init__(self, frame: pd.DataFrame, metrics, directions, rows=None):
        self.n_rows = len(frame)
        self.rows = np.ones(self.n_rows, dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
        every_row = bool(self.rows.all())
        positions = np.flatnonzero(self.rows)
        columns = {metric: frame[metric] for metric in metrics}

        def sort(metric):
            """(which rows it scored, its order): one column's copy at a time in each thread, not all of them."""
            values = columns[metric].to_numpy(dtype=float, na_value=np.nan)
            if every_row:
                return ~np.isnan(values), closest_first(orient(values, directions[metric]))
            return ~np.isnan(values), positions[closest_first(orient(values[positions], directions[metric]))]

        # numpy sorts without the GIL: a thread per CPU sorts the metrics at once.
        with ThreadPoolExecutor(max(1, min(len(columns), usable_cpus()))) as threads:
            found = dict(zip(columns, threads.map(sort, columns)))
        self._scored = {metric: scored for metric, (scored, _order) in found.items()}
        self._closest = {metric: order for metric, (_scored, order) in found.items()}

    def __contains__(self, metric) -> bool:
        return metric in self._closest

    def closest_first(self, metric, keep) -> np.ndarray:
        """`closest_first` of the metric's oriented scores on the rows `keep` (a mask of the frame's rows): the
        cut of a stable sort, so exactly that of those rows alone."""
        keep = np.asarray(keep, dtype=bool)
        if len(keep) != self.n_rows or (keep & ~self.rows).any():
            raise ValueError("ScoreOrders: asked for rows that were not sorted")
        return suborder(self._closest[metric], keep)

    def ascending(self, metric, keep) -> np.ndarray:
        """A sort of the metric's oriented scores on the rows `keep`, lowest first, NaN last, runs of ties in
        reverse input order: for the steps that read no order inside a run (DeLong's counts, ranks)."""
        closest = self.closest_first(metric, keep)
        n_scored = int(np.count_nonzero(self._scored[metric][np.asarray(keep, dtype=bool)]))
        return np.concatenate([closest[:n_scored][::-1], closest[n_scored:]])


def ascending_order(values, orders=None, metric=None, rows=None) -> np.ndarray:
    """A sort of `values` lowest first, NaN last, for the steps that read no order inside a run of ties:
    cut from `orders` (`ScoreOrders`) on the frame's `rows` where it sorted `metric`, else np.argsort's."""
    if orders is not None and metric in orders:
        return orders.ascending(metric, rows)
    return np.argsort(values)


def labelled_rows(frame: pd.DataFrame, metric: str) -> np.ndarray:
    """The rows that are both labelled and scored by `metric`, as a boolean mask."""
    return frame["paraphrase"].notna().to_numpy() & frame[metric].notna().to_numpy()


def labelled_scores(frame: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Scores and boolean labels (True: paraphrase) of the rows that are both labelled and scored."""
    keep = labelled_rows(frame, metric)
    scores = frame[metric].to_numpy(dtype=float, na_value=np.nan)[keep]
    labels = frame["paraphrase"].to_numpy(dtype=float, na_value=np.nan)[keep] == 1
    return scores, labels


def safe_divide(numerator, denominator):
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


def evenly_spaced(frame: pd.DataFrame, max_rows: int | None) -> pd.DataFrame:
    """At most `max_rows` rows evenly spaced through the frame, first and last kept (None: all rows)."""
    if max_rows is None or len(frame) <= max_rows:
        return frame
    return frame.iloc[evenly_spaced_positions(len(frame), max_rows)]


def evenly_spaced_positions(n: int, max_rows: int | None) -> np.ndarray:
    """The positions `evenly_spaced` keeps out of `n` rows."""
    if max_rows is None or n <= max_rows:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_rows).astype(int))


FAILED = "failed"  # the `attrs` key of a table whose step raised: the note saying so


def failed_table(note: str) -> pd.DataFrame:
    """The table a step that raised leaves: no rows, and the note saying why (`failure_notes` collects it)."""
    table = pd.DataFrame()
    table.attrs[FAILED] = note
    return table


def computed_apart(groups: dict, what=str) -> dict[str, pd.DataFrame]:
    """The tables of `groups` ({names: () -> {name: table}}), each group computed on its own: one that raises
    (degenerate data no step foresaw, or a bug) leaves its tables empty with a note, and the others stand.
    `what(name)` titles a table in the note."""
    tables = {}
    for names, compute in groups.items():
        names = (names,) if isinstance(names, str) else names
        try:
            tables |= compute()
        except Exception as error:  # noqa: BLE001 - whatever it was, it loses its own tables and no other
            note = failure_note(", ".join(what(name) for name in names), error)
            tables |= {name: failed_table(note) for name in names}
    return tables


def failure_note(what: str, error: Exception) -> str:
    return f"{what}: could not be computed ({type(error).__name__}: {error}); the other tables are unaffected."


def failure_notes(tables: dict) -> list[str]:
    """The notes of the tables whose step raised (`failed_table`), each once, in table order."""
    return list(dict.fromkeys(t.attrs[FAILED] for t in tables.values() if FAILED in getattr(t, "attrs", {})))
