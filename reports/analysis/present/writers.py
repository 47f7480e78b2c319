"""Writing a laid-out table (`Shown`): HTML with its caption, booktabs LaTeX, and a CSV's opening comment lines."""

import re
from html import escape

import numpy as np
import pandas as pd

from reports.analysis import latex as latex_writer
from reports.analysis.vocabulary import title_for

from .cells import METRIC_VALUES, NAMED_VALUES, metric_labels
from .declared import shown, spec_of
from .shown import Shown

# Columns (stub included) above which a table is printed on a landscape page (report.css).
PORTRAIT_COLUMNS = 9


def is_wide(result: Shown) -> bool:
    stub = 0 if isinstance(result.table.index, pd.RangeIndex) else result.table.index.nlevels
    return stub + result.table.shape[1] > PORTRAIT_COLUMNS


def wide(report, name) -> pd.DataFrame:
    """The table `name` as a wide frame of formatted strings (empty when the table is)."""
    result = shown(report, name)
    return pd.DataFrame() if result is None else result.table


def csv_comments(report, name, title=None) -> list[str]:
    """The lines a CSV of table `name` opens with (each written after "# "): its title, then its names in words.

    The CSV keeps the analysis' names (stable for scripts); these lines say what each
    column, metric and named value is, in the words the page and the LaTeX use.
    """
    frame = report.tables[name]
    lines = [
        title or spec_of(report, name).heading,
        "Read with pandas.read_csv(path, comment='#'); columns as named below.",
    ]
    lines += [f"column {column}: {title_for(column)}" for column in frame.columns if title_for(column) != column]
    for column in (c for c in METRIC_VALUES if c in frame.columns):
        metrics = list(dict.fromkeys(frame[column].dropna()))
        lines += [f"{column} {m}: {text}" for m, text in zip(metrics, metric_labels(report, metrics))]
    for column in (c for c in NAMED_VALUES if c in frame.columns):
        values = [str(v) for v in dict.fromkeys(frame[column].dropna())]
        lines += [f"{column} {v}: {title_for(v)}" for v in values if title_for(v) != v]
    if any(frame[c].dtype == bool for c in frame.columns):
        lines.append("True/False columns: shown as Yes/No on the page and in LaTeX.")
    return lines


def html(report, name) -> str:
    """The table as HTML, its caption after it: header cells with `scope`, stub headers in words, best cells bold."""
    result = shown(report, name)
    if result is None:
        return '<p class="muted">Nothing to show yet.</p>'
    return table_html(result, f"caption-{name}") + caption_html(result, f"caption-{name}")


def caption_html(result: Shown, caption_id: str) -> str:
    """The caption as a paragraph of its own: set outside a wide table's scrolling box, it wraps at the page's width
    (a <caption> is as wide as its table, and was cut off with it)."""
    return f'<p class="table-caption" id="{escape(caption_id)}">{escape(result.caption)}</p>'


def table_html(result: Shown, caption_id: str) -> str:
    """The table as HTML, described by the caption of id `caption_id` (`caption_html`)."""
    table = result.table
    bold = result.bold if result.bold is not None else pd.DataFrame(False, index=table.index, columns=table.columns)
    stub = [] if isinstance(table.index, pd.RangeIndex) else list(table.index.names)
    parts = [f'<table class="report-table" aria-describedby="{escape(caption_id)}">', "<thead>"]
    parts += _header_rows(table.columns, stub)
    parts.append("</thead><tbody>")
    for position, (_key, row) in enumerate(table.iterrows()):
        cells = _stub_cells(table.index, position) if stub else []
        for column, (value, strong) in enumerate(zip(row, bold.iloc[position], strict=True)):
            text = escape("–" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value))
            # Numbers align right, names left; without a stub the first column names the row and stays in view.
            kind = "num" if NUMERIC.match(text) else "text"
            kind += " stub" if not stub and column == 0 else ""
            cells.append(f'<td class="{kind}">{f"<strong>{text}</strong>" if strong else text}</td>')
        parts.append(f"<tr>{''.join(cells)}</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


NUMERIC = re.compile(r"[-–−+\d.]")
STUB = ' class="stub"'  # the first column, kept in view while a wide table scrolls (report.css)


def _header_rows(columns, stub):
    levels = columns.nlevels
    rows = []
    for level in range(levels):
        cells = []
        if level == 0:
            cells += [
                f'<th scope="col" rowspan="{levels}"{STUB if i == 0 else ""}>{escape(str(s or "Measure"))}</th>'
                for i, s in enumerate(stub)
            ]
        if level < levels - 1:
            for text, span in _runs([tuple(c[: level + 1]) for c in columns]):
                cells.append(f'<th scope="colgroup" colspan="{span}">{escape(str(text[-1]))}</th>')
        else:
            names = [c[-1] if isinstance(c, tuple) else c for c in columns]
            cells += [f'<th scope="col">{escape(str(n))}</th>' for n in names]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return rows


def _stub_cells(index, position):
    """Row headers; an outer level spans its block of rows (`rowgroup`), shown once."""
    key = index[position]
    key = key if isinstance(key, tuple) else (key,)
    cells = []
    for level, value in enumerate(key):
        if level < len(key) - 1:
            prefixes = [tuple(k[: level + 1]) for k in index]
            if position and prefixes[position - 1] == prefixes[position]:
                continue
            span = next((span for text, span, start in _runs_at(prefixes) if start == position), 1)
            cells.append(f'<th scope="rowgroup" rowspan="{span}"{STUB if level == 0 else ""}>{escape(str(value))}</th>')
        else:
            cells.append(f'<th scope="row"{STUB if level == 0 else ""}>{escape(str(value))}</th>')
    return cells


def _runs(values):
    return [(text, span) for text, span, _ in _runs_at(values)]


def _runs_at(values):
    """(value, length, start) of each run of equal consecutive values."""
    runs = []
    for position, value in enumerate(values):
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1, position])
    return [tuple(run) for run in runs]


def latex(report, name) -> str | None:
    """The table as a booktabs LaTeX table, caption and label included; None when it has no rows.

    The caption opens with the table's title: LaTeX numbers the table, the paper's number follows as a reference.
    """
    result = shown(report, name)
    if result is None:
        return None
    flat, bold = _flat(result)
    caption = f"{spec_of(report, name).caption_title}. {result.caption}"
    stub = 0 if isinstance(result.table.index, pd.RangeIndex) else result.table.index.nlevels
    return latex_writer.latex_table(flat, caption=caption, label=f"tab:{name}", bold=bold, stub=max(stub, 1))


def _flat(result: Shown):
    """The stub's levels as leading columns (an outer level shown once per block), for LaTeX."""
    table = result.table
    bold = result.bold if result.bold is not None else pd.DataFrame(False, index=table.index, columns=table.columns)
    if isinstance(table.index, pd.RangeIndex):
        return table, bold
    names = [n or "" for n in table.index.names]
    keys = [k if isinstance(k, tuple) else (k,) for k in table.index]
    stub = {}
    for level, name in enumerate(names):
        shown_values = [
            "" if level < len(names) - 1 and i and keys[i - 1][: level + 1] == k[: level + 1] else str(k[level])
            for i, k in enumerate(keys)
        ]
        stub[(name, "") if table.columns.nlevels == 2 else name] = shown_values
    stub_frame = pd.DataFrame(stub)
    if table.columns.nlevels == 2:
        stub_frame.columns = pd.MultiIndex.from_tuples(stub_frame.columns)
    flat = pd.concat([stub_frame, table.reset_index(drop=True)], axis=1)
    flat_bold = pd.concat([stub_frame.map(lambda _: False), bold.reset_index(drop=True)], axis=1)
    return flat, flat_bold
