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
    "% Needs \\usepackage{booktabs} in the preamble.\n"
    "% Written by Parasol; bold marks the best value of each row or column, as stated in the caption.\n"
)


def latex_table(
    display: pd.DataFrame, *, caption: str, label: str, bold: pd.DataFrame | None = None, stub: int = 1
) -> str:
    """One `table` environment: booktabs rules, escaped cells and headers, bold where `bold` is True.

    The first `stub` columns hold row headers (left-aligned); the others hold numbers (right-aligned).
    """
    frame = display.astype(str).reset_index(drop=True)
    styler = frame.style.hide(axis="index").format(escape="latex").format_index(escape="latex", axis=1)
    if bold is not None:
        mask = bold.reset_index(drop=True).reindex_like(frame).eq(True)
        styler = styler.apply(lambda _: mask.replace({True: "textbf: --rwrap;", False: ""}), axis=None)
    body = styler.to_latex(
        hrules=True,
        caption=escape(caption),
        label=label,
        position="htbp",
        position_float="centering",
        column_format="l" * stub + "r" * (len(frame.columns) - stub),
    )
    return PREAMBLE + _symbols(body)


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
        "\\usepackage{booktabs}\n\\usepackage{textcomp}\n"
        f"\\title{{{escaped}}}\n\\begin{{document}}\n" + "\n".join(tables) + "\n\\end{document}\n"
    )
