"""The report's tables as a paper sets them: readable words, stated precision, best values in bold.

A layout turns a tidy table (the CSV's long form) into a `Shown`: a wide frame of strings whose
index names are the stub's headers, with a mask of the cells to set in bold and the sentence
saying what bold and the numbers mean. One purpose per module:

- `cells`: how one value reads (numbers, intervals, names in the reader's words);
- `shown`: `Shown` and the pieces layouts build it from (grids, orders, best cells);
- `layouts`: the report's own tables' layouts; `pem`: PEM's (the criteria report's);
- `declared`: each table declared once (`Table`, `TABLES`, `SPECS`), `spec_of` and `shown`;
- `empty`: why a table is not shown; `writers`: HTML, LaTeX and a CSV's comment lines.

What the rest of Parasol uses is named here.
"""

from .declared import SPECS, TABLES, Table, shown, spec_of, tables_in
from .empty import empty_reason
from .shown import Shown, best_cells
from .writers import caption_html, csv_comments, html, is_wide, latex, table_html, wide

__all__ = [
    "SPECS",
    "TABLES",
    "Shown",
    "Table",
    "best_cells",
    "caption_html",
    "csv_comments",
    "empty_reason",
    "html",
    "is_wide",
    "latex",
    "shown",
    "spec_of",
    "table_html",
    "tables_in",
    "wide",
]
