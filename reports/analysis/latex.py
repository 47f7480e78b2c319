"""Report tables as LaTeX `booktabs` tables that compile as they are in a standard article.

Input is a *display* table: cells already formatted as the page shows them (strings), the
header already in the reader's words. pandas' Styler writes the LaTeX (escaping included);
the best values of a table are set in bold, as the paper marks them.
"""

import pandas as pd

# Symbols the page uses that pdfLaTeX's utf8 input does not know, as math-mode commands.
SYMBOLS = {
    "↑": "$\\uparrow$",
    "↓": "$\\downarrow$",
    "α": "$\\alpha$",
    "κ": "$\\kappa$",
    "ρ": "$\\rho$",
    "τ": "$\\tau$",
    "≥": "$\\geq$",
    "≤": "$\\leq$",
    "±": "$\\pm$",
    "−": "$-$",
    "θ": "$\\theta$",
    "φ": "$\\varphi$",
    "σ": "$\\sigma$",
    "μ": "$\\mu$",
    "ε": "$\\varepsilon$",
    "≠": "$\\neq$",
    "≈": "$\\approx$",
    "×": "$\\times$",
    "→": "$\\rightarrow$",
    "…": "\\ldots{}",
}
SPECIALS = {
    "\\": "\\textbackslash{}",
    "&": "\\&",
    "%": "\\%",
    "$": "\\$",
    "#": "\\#",
    "_": "\\_",
    "{": "\\{",
    "}": "\\}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
}

PREAMBLE = (
    "% Needs \\usepackage{booktabs}, longtable, rotating and lscape in the preamble.\n"
    "% Written by Parasol; bold marks the best value of each row or column, as stated in the caption.\n"
)


# A table of more rows than this would run off its page as a float: it breaks across pages instead.
LONG_ROWS = 40
# A turned page holds fewer rows (its height is the text's width): a wide table longer than this breaks too.
SIDEWAYS_ROWS = 24
# The text block of a standard article (10pt, letter or A4), in points: its width, and the width a
# landscape page gives (the text height). A table wider than the first turns the page; wider than the
# second, it is split into parts by columns, each repeating the row headers.
PORTRAIT_PT = 345
LANDSCAPE_PT = 550
# The smallest type a table is set in (\footnotesize of a 10pt article): nothing is ever scaled down.
SIZES = (("\\small", 9), ("\\footnotesize", 8))
# The caption stands above the table and LaTeX puts no space below a caption: booktabs' space above
# the top rule (0pt by default) keeps it off the rule.
CAPTION_GAP = "\\setlength{\\abovetopsep}{6pt}"
# About how wide characters are at 8pt in Computer Modern (measured with pdflatex, rounded up: digits
# 4pt, punctuation and spaces 2.2-3.1pt, lower case 2.2-6pt, capitals 5.4-7.7pt), and what each column
# adds (\tabcolsep on both sides).
NARROW = set(" .,:;'()[]|!ilIjtf")
NARROW_PT, CHARACTER_PT, CAPITAL_PT = 3.0, 4.4, 6.6
COLUMN_GAP_PT = 12


def latex_table(
    display: pd.DataFrame, *, caption: str, label: str, bold: pd.DataFrame | None = None, stub: int = 1
) -> str:
    """One `table` environment (or several, split by columns): booktabs rules, escaped cells, bold where asked.

    The first `stub` columns hold row headers (left-aligned); the others hold numbers (right-aligned).
    Type is never smaller than 8pt and never scaled: a table too wide for the text is set on a
    landscape page, one too wide for that is split into parts by columns (each repeating the row
    headers), and one longer than LONG_ROWS is a `longtable`, its header repeated on every page.
    """
    frame = display.astype(str).reset_index(drop=True)
    mask = None if bold is None else bold.reset_index(drop=True).reindex_like(frame).eq(True)
    parts = _column_parts(frame, stub)
    written = []
    for number, columns in enumerate(parts, start=1):
        part_caption = caption if len(parts) == 1 else f"{caption} (Part {number} of {len(parts)}.)"
        part_label = label if number == 1 else f"{label}-{number}"
        part_mask = None if mask is None else mask.iloc[:, columns]
        written.append(_one_table(frame.iloc[:, columns], part_caption, part_label, part_mask, stub))
    return PREAMBLE + "\n".join(written)


def _one_table(frame, caption, label, mask, stub):
    width = width_pt(frame)
    frame, headers = _with_header_placeholders(frame)
    styler = frame.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    if mask is not None:
        marks = mask.replace({True: "textbf: --rwrap;", False: ""}).set_axis(frame.columns, axis=1)
        styler = styler.apply(lambda _: marks, axis=None)
    column_format = "l" * stub + "r" * (len(frame.columns) - stub)
    landscape = width > PORTRAIT_PT
    size = _size(width, LANDSCAPE_PT if landscape else PORTRAIT_PT)
    if len(frame) > (SIDEWAYS_ROWS if landscape else LONG_ROWS):
        body = styler.to_latex(
            hrules=True, caption=escape(caption), label=label, environment="longtable", column_format=column_format
        )
        # A long table breaks across pages, so it cannot be a rotated float: the pages themselves turn.
        start, end = ("\\begin{landscape}", "\\end{landscape}") if landscape else ("\\begingroup", "\\endgroup")
        body = body.replace("\\begin{longtable}", f"{start}{size}{CAPTION_GAP}\n\\begin{{longtable}}", 1)
        return _symbols(_headers_in(body, headers, stub).rstrip() + f"\n{end}\n")
    body = styler.to_latex(
        hrules=True,
        caption=escape(caption),
        label=label,
        position="htbp",
        position_float="centering",
        column_format=column_format,
    )
    body = body.replace("\\centering", f"\\centering\n{size}{CAPTION_GAP}", 1)
    if landscape:  # a float of its own page, turned (rotating's sidewaystable)
        body = body.replace("\\begin{table}[htbp]", "\\begin{sidewaystable}", 1)
        body = body.replace("\\end{table}", "\\end{sidewaystable}", 1)
    return _symbols(_headers_in(body, headers, stub))


# A header wider than its column's cells breaks into lines of at most this many points (or its cells' width).
HEADER_LINE_PT = 48
PLACEHOLDER = "PARASOLHEADER{}X"  # letters only: LaTeX escaping leaves it as it is


def header_lines(frame, column) -> list[str]:
    """The lines column `column`'s header is set on: one, unless it is wider than the column's cells."""
    text = _header_text(column)
    limit = max(HEADER_LINE_PT, *(text_width_pt(cell) for cell in frame[column]))
    lines = []
    for word in text.split(" "):
        if lines and text_width_pt(f"{lines[-1]} {word}") <= limit:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _with_header_placeholders(frame):
    """`frame` with each header of several lines replaced by a placeholder, and {placeholder: lines}."""
    headers, names = {}, []
    for position, column in enumerate(frame.columns):
        lines = header_lines(frame, column)
        if len(lines) == 1:
            names.append(column)
            continue
        placeholder = PLACEHOLDER.format(position)
        headers[placeholder] = (position, lines)
        names.append((*column[:-1], placeholder) if isinstance(column, tuple) else placeholder)
    renamed = frame.copy()
    renamed.columns = pd.MultiIndex.from_tuples(names) if frame.columns.nlevels > 1 else pd.Index(names)
    return renamed, headers


def _headers_in(body, headers, stub):
    """The placeholders of `body` replaced by their headers' lines, stacked and aligned as their column."""
    for placeholder, (position, lines) in headers.items():
        align = "l" if position < stub else "r"
        # A line break then {}: a line opening with "[" ("[95% CI]") would be read as the break's spacing.
        stacked = "\\\\{}".join(escape(line) for line in lines)
        body = body.replace(placeholder, f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{stacked}\\end{{tabular}}")
    return body


def _size(width, available):
    """The larger type in which a table `width` points wide at 8pt still fits `available` points."""
    for command, points in SIZES:
        if width * points / 8 <= available:
            return command
    return SIZES[-1][0]


def _header_text(column) -> str:
    return str(column[-1]) if isinstance(column, tuple) else str(column)


def text_width_pt(text) -> float:
    """About how wide `text` is set at 8pt, in points (a little more than pdflatex sets it)."""
    return sum(
        NARROW_PT if c in NARROW else CAPITAL_PT if c.isupper() or c in "MmWw%—±" else CHARACTER_PT for c in str(text)
    )


def column_width_pt(frame, column) -> float:
    """About how wide `column` of `frame` is set at 8pt: its widest cell or header line, and its gaps."""
    return max(text_width_pt(text) for text in [*header_lines(frame, column), *frame[column]]) + COLUMN_GAP_PT


def width_pt(frame) -> float:
    """About how wide a table of `frame` is set at 8pt, in points (an outer header counts over its columns)."""
    width = sum(column_width_pt(frame, column) for column in frame.columns)
    if frame.columns.nlevels > 1:
        # Grouped by the outer level as an array (a list would be read as a list of keys: tuples for groups).
        outer = frame.columns.get_level_values(0).to_numpy()
        groups = pd.Series(range(len(frame.columns))).groupby(outer, sort=False)
        for group, positions in groups.groups.items():
            inner = sum(column_width_pt(frame, frame.columns[p]) for p in positions)
            width += max(0.0, text_width_pt(group) + COLUMN_GAP_PT - inner)
    return width


def _column_parts(frame, stub) -> list[list[int]]:
    """The positions of the columns of each part: all in one unless a landscape page cannot hold them at 8pt."""
    if width_pt(frame) <= LANDSCAPE_PT:
        return [list(range(len(frame.columns)))]
    stub_columns = list(range(stub))
    available = LANDSCAPE_PT - width_pt(frame.iloc[:, stub_columns])
    parts, current, used = [], [], 0.0
    for position in range(stub, len(frame.columns)):
        width = column_width_pt(frame, frame.columns[position])
        if current and used + width > available:
            parts.append(current)
            current, used = [], 0.0
        current.append(position)
        used += width
    parts.append(current)
    return [stub_columns + part for part in parts]


def escape(text: str) -> str:
    """Plain text (a caption) made safe for LaTeX."""
    return _symbols("".join(SPECIALS.get(character, character) for character in str(text)))


def _symbols(latex: str) -> str:
    for symbol, command in SYMBOLS.items():
        latex = latex.replace(symbol, command)
    return latex


# For checks: each tabular logs the type size it is set in ("PARASOL-TABLE-SIZE 8").
SIZE_PROBE = (
    "\\usepackage{etoolbox}\n\\makeatletter\n"
    "\\AtBeginEnvironment{tabular}{\\typeout{PARASOL-TABLE-SIZE \\f@size}}\n"
    "\\AtBeginEnvironment{longtable}{\\typeout{PARASOL-TABLE-SIZE \\f@size}}\n\\makeatother\n"
)


def latex_document(tables: list[str], title: str = "Parasol report", *, probe: bool = False) -> str:
    """A standalone article holding `tables`, for checking that they compile; `probe`: log each table's type size."""
    escaped = escape(title)
    return (
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n"
        "\\usepackage{booktabs}\n\\usepackage{textcomp}\n\\usepackage{graphicx}\n\\usepackage{longtable}\n"
        "\\usepackage{rotating}\n\\usepackage{lscape}\n"
        + (SIZE_PROBE if probe else "")
        + f"\\title{{{escaped}}}\n\\begin{{document}}\n"
        + "\n".join(tables)
        + "\n\\end{document}\n"
    )
