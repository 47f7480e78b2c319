"""LaTeX tables: escaped, booktabs, bold best values; compiled by pdflatex where Debian's TeX is installed."""

import shutil
import subprocess

import pandas as pd
import pytest

from reports.analysis.latex import escape, latex_document, latex_table


def table():
    display = pd.DataFrame({"Metric": ["LEV. ↓", "BLEU_2 & co", "50% #1"], "AUC": ["0.73 [0.71, 0.74]", "0.61", "–"]})
    bold = pd.DataFrame({"Metric": [False] * 3, "AUC": [True, False, False]})
    return latex_table(display, caption="Table 3: best_threshold ≥ 0", label="tab:table3", bold=bold)


def test_it_writes_a_booktabs_table_with_escaped_cells_and_bold_best_values():
    latex = table()
    assert latex.count("\\toprule") == latex.count("\\midrule") == latex.count("\\bottomrule") == 1
    assert "\\textbf{0.73 [0.71, 0.74]}" in latex
    assert "BLEU\\_2 \\& co" in latex and "50\\% \\#1" in latex
    assert "LEV. $\\downarrow$" in latex
    assert "\\caption{Table 3: best\\_threshold $\\geq$ 0}" in latex and "\\label{tab:table3}" in latex
    assert "\\begin{tabular}{lr}" in latex


def test_it_escapes_every_special_character_of_a_caption():
    assert escape("a_b & c% {d} $e #f ~g ^h \\i") == (
        "a\\_b \\& c\\% \\{d\\} \\$e \\#f \\textasciitilde{}g \\textasciicircum{}h \\textbackslash{}i"
    )


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine installed (structure checked above)")
def test_it_compiles_in_a_standard_article(tmp_path):
    (tmp_path / "report.tex").write_text(latex_document([table(), table()]), encoding="utf-8")
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert (tmp_path / "report.pdf").stat().st_size > 0
