"""A table laid out for reading (`Shown`), and the pieces layouts build one from: grids, orders, the best cells."""

from dataclasses import dataclass

import pandas as pd

from reports.analysis.labels import GLOBAL
from reports.analysis.vocabulary import title_for

from .cells import PRECISION, cell_in_words, metric_labels


@dataclass
class Shown:
    """A table for reading: `table` holds strings; `bold` (same shape) the best cells; `caption` says both."""

    table: pd.DataFrame
    bold: pd.DataFrame | None = None
    caption: str = PRECISION

    def __post_init__(self):
        # A mask of another shape silently dropped cells on the page and bold in LaTeX: refuse it.
        if self.bold is not None and self.bold.shape != self.table.shape:
            raise ValueError(f"bold mask {self.bold.shape} does not match the table {self.table.shape}")


def best_cells(values: pd.DataFrame, *, axis: int, higher=True) -> pd.DataFrame:
    """True where a cell holds the best value of its column (axis=0) or row (axis=1); ties all bold."""
    values = values.apply(pd.to_numeric, errors="coerce").astype(float)
    best = values.max(axis=axis) if higher else values.min(axis=axis)
    return values.eq(best, axis=1 - axis) & values.notna()


def best_in_row(values, direction):
    """True at the best of a row of numbers (ties all), the highest unless `direction` is lower."""
    values = pd.to_numeric(pd.Series(values), errors="coerce").astype(float)
    if values.isna().all():
        return [False] * len(values)
    best = values.min() if direction == "lower" else values.max()
    return list(values.eq(best) & values.notna())


def grid(frame, row, column, value, *, rows_order=None, columns_order=None):
    """A pivot of `value` keeping the given (or first-seen) orders of rows and columns."""
    table = frame.pivot_table(index=row, columns=column, values=value, aggfunc="first", sort=False, dropna=False)
    rows = rows_order if rows_order is not None else list(dict.fromkeys(frame[row]))
    columns = columns_order if columns_order is not None else list(dict.fromkeys(frame[column]))
    return table.reindex(index=rows, columns=columns)


def _ordered(values, order):
    present = list(dict.fromkeys(values))
    return [v for v in order if v in present] + [v for v in present if v not in order]


def corpus_order(report, frame):
    """The corpora of `frame` in the report's order, then Global and MBD, then any other.

    Global is every corpus together: beside a single corpus it repeats that corpus cell for cell, so it is
    left out of the table (the CSV keeps it)."""
    order = _ordered(frame["corpus"], [*report.corpora, GLOBAL, "MBD"])
    if len([corpus for corpus in order if corpus not in (GLOBAL, "MBD")]) == 1:
        order = [corpus for corpus in order if corpus != GLOBAL]
    return order


def metrics_by_corpus(report, frame, cells, *, sub=None):
    """One row per metric; one column per corpus (and per `sub` value inside each corpus when given)."""
    frame = frame.assign(cell=cells)
    columns = "corpus" if sub is None else ["corpus", sub]
    table = frame.pivot_table(index="metric", columns=columns, values="cell", aggfunc="first", sort=False)
    metrics = list(dict.fromkeys(frame["metric"]))
    corpora = corpus_order(report, frame)
    if sub is None:
        order = corpora
    else:
        subs = list(dict.fromkeys(frame[sub]))
        order = pd.MultiIndex.from_tuples([(c, s) for c in corpora for s in subs])
    table = table.reindex(index=metrics, columns=order)
    return _relabel(report, table)


def _relabel(report, table):
    """Metric rows named as printed (with arrows), corpus and sub-column headers in the reader's words."""
    table = table.copy()
    table.index = pd.Index(metric_labels(report, table.index), name="Metric")
    if isinstance(table.columns, pd.MultiIndex):
        table.columns = pd.MultiIndex.from_tuples([(str(c), title_for(s)) for c, s in table.columns])
    else:
        table.columns = pd.Index([str(c) for c in table.columns])
    return table


def as_is(report, frame):
    """Tables without a layout of their own: names in the reader's words, floats to the stated precision."""
    table = pd.DataFrame(
        {column: [cell_in_words(report, column, v) for v in frame[column]] for column in frame.columns}
    )
    table.columns = [title_for(c) for c in table.columns]
    return Shown(table.reset_index(drop=True), caption=PRECISION)
