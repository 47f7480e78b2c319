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
    "% Needs \\usepackage{booktabs}, graphicx, longtable and lscape in the preamble.\n"
    "% Written by Parasol; bold marks the best value of each row or column, as stated in the caption.\n"
)


# A table of more rows than this would run off its page as a float: it breaks across pages instead.
LONG_ROWS = 40
# About what a \\scriptsize row holds across a standard article's text width (345pt).
PORTRAIT_CHARACTERS = 90
# A float wider than the text is scaled down to the text width (never up): nothing is cut at the margin.
FIT_OPEN = "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"


def latex_table(
    display: pd.DataFrame, *, caption: str, label: str, bold: pd.DataFrame | None = None, stub: int = 1
) -> str:
    """One `table` environment: booktabs rules, escaped cells and headers, bold where `bold` is True.

    The first `stub` columns hold row headers (left-aligned); the others hold numbers (right-aligned).
    A table wider than the text is scaled to fit it; one longer than LONG_ROWS is a `longtable`
    in a smaller type, its header repeated on every page.
    """
    frame = display.astype(str).reset_index(drop=True)
    styler = frame.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    if bold is not None:
        mask = bold.reset_index(drop=True).reindex_like(frame).eq(True)
        styler = styler.apply(lambda _: mask.replace({True: "textbf: --rwrap;", False: ""}), axis=None)
    column_format = "l" * stub + "r" * (len(frame.columns) - stub)
    if len(frame) > LONG_ROWS:
        body = styler.to_latex(
            hrules=True, caption=escape(caption), label=label, environment="longtable", column_format=column_format
        )
        # A float can be scaled; a long table cannot: one too wide for the text turns the page instead.
        wide = _characters(frame) > PORTRAIT_CHARACTERS
        start, end = ("\\begin{landscape}", "\\end{landscape}") if wide else ("\\begingroup", "\\endgroup")
        body = body.replace("\\begin{longtable}", f"{start}\\scriptsize\n\\begin{{longtable}}", 1)
        return PREAMBLE + _symbols(body.rstrip() + f"\n{end}\n")
    body = styler.to_latex(
        hrules=True,
        caption=escape(caption),
        label=label,
        position="htbp",
        position_float="centering",
        column_format=column_format,
    )
    body = body.replace("\\begin{tabular}", FIT_OPEN + "\\begin{tabular}", 1).replace(
        "\\end{tabular}", "\\end{tabular}}", 1
    )
    return PREAMBLE + _symbols(body)


def _characters(frame) -> int:
    """About how many characters wide a row of `frame` is set: its longest cell or header per column, plus gaps."""
    headers = [" ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in frame.columns]
    return sum(max([len(h), *frame[c].map(len)]) + 3 for h, c in zip(headers, frame.columns))


def escape(text: str) -> str:
    """Plain text (a caption) made safe for LaTeX."""
    return _symbols("".join(SPECIALS.get(character, character) for character in str(text)))


def _symbols(latex: str) -> str:
    for symbol, command in SYMBOLS.items():
        latex = latex.replace(symbol, command)
    return latex


def latex_document(tables: list[str], title: str = "Parasol report") -> str:
    """A standalone article holding `tables`, for checking that they compile."""
    escaped = escape(title)
    return (
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n"
        "\\usepackage{booktabs}\n\\usepackage{textcomp}\n\\usepackage{graphicx}\n\\usepackage{longtable}\n\\usepackage{lscape}\n"
        f"\\title{{{escaped}}}\n\\begin{{document}}\n" + "\n".join(tables) + "\n\\end{document}\n"
    )
