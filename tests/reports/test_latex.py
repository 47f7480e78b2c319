"""LaTeX tables: escaped, booktabs, bold best values; compiled by pdflatex where Debian's TeX is installed."""

import re
import warnings

import pandas as pd
import pytest

from reports.analysis.latex import COLUMN_GAP_PT, escape, latex_document, latex_table, text_width_pt, width_pt
from tests.pdflatex import compile_latex, needs_pdflatex


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


@needs_pdflatex
def test_it_compiles_in_a_standard_article(tmp_path):
    (tmp_path / "report.tex").write_text(latex_document([table(), table()]), encoding="utf-8")
    compile_latex(tmp_path, "report")
    assert (tmp_path / "report.pdf").stat().st_size > 0


def wide(n_columns, cell="0.73 [0.71, 0.74]"):
    return pd.DataFrame({"Metric": ["Lev. ↓", "BLEU ↑"], **{f"Corpus {i}": [cell, cell] for i in range(n_columns)}})


def test_a_table_is_never_scaled_nor_set_below_8pt():
    for n_columns in (1, 5, 9, 30):
        latex = latex_table(wide(n_columns), caption="c", label="tab:t")
        assert "\\resizebox" not in latex and "\\scalebox" not in latex
        assert "\\scriptsize" not in latex and "\\tiny" not in latex
        assert latex.count("\\small") + latex.count("\\footnotesize") == latex.count("\\caption{")


def test_a_table_too_wide_for_the_text_turns_the_page_and_one_too_wide_for_that_is_split():
    assert "sidewaystable" not in latex_table(wide(2), caption="c", label="tab:t")
    turned = latex_table(wide(6), caption="c", label="tab:t")
    assert turned.count("\\begin{sidewaystable}") == 1 and "Part 1" not in turned
    split = latex_table(wide(30), caption="c", label="tab:t")
    parts = split.count("\\caption{")
    assert parts > 1 and f"(Part {parts} of {parts}.)" in split
    # Each part repeats the row headers; together they hold every column once.
    assert split.count("Lev. $\\downarrow$") == parts
    assert sum(split.count(f"Corpus {i} ") + split.count(f"Corpus {i}\\\\") for i in range(30)) >= 30


def test_a_header_wider_than_its_cells_breaks_into_lines():
    display = pd.DataFrame({"Judge": ["a"], "Agreement with the others": ["0.50"]})
    latex = latex_table(display, caption="c", label="tab:t")
    assert "\\begin{tabular}[b]{@{}r@{}}Agreement\\\\{}with the\\\\{}others\\end{tabular}" in latex


def font_sizes(log):
    """The type sizes (pt) the probe of `latex_document` (with `probe=True`) logged at each table."""
    return [float(size) for size in re.findall(r"PARASOL-TABLE-SIZE (\d+(?:\.\d+)?)", log)]


@needs_pdflatex
def test_wide_tables_compile_within_their_page_at_8pt_or_more(tmp_path):
    tables = [latex_table(wide(n), caption=f"c{n}", label=f"tab:{n}") for n in (1, 6, 30)]
    # A header broken before "[": read as text, not as the line break's spacing.
    bracketed = pd.DataFrame({"Metric": ["Lev. ↓"], "Spearman ρ [95% CI]": ["0.1"]})
    tables.append(latex_table(bracketed, caption="bracket", label="tab:bracket"))
    tables += [
        latex_table(pd.concat([wide(n)] * 15, ignore_index=True), caption=f"long {n}", label=f"tab:long{n}")
        for n in (6, 12)
    ]
    (tmp_path / "report.tex").write_text(latex_document(tables, probe=True), encoding="utf-8")
    log = compile_latex(tmp_path, "report")
    assert "Overfull" not in log and "Float too large" not in log
    sizes = font_sizes(log)
    assert len(sizes) >= 5 and min(sizes) >= 8, sizes


@pytest.mark.parametrize("rows", [2, 60])  # a float, and a longtable
def test_the_caption_above_a_table_is_spaced_from_its_top_rule(rows):
    display = pd.DataFrame({"Metric": ["BLEU ↑"] * rows, "AUC": ["0.61"] * rows})
    latex = latex_table(display, caption="c", label="tab:t")
    # LaTeX adds no space below a caption; booktabs' \abovetopsep (0pt by default) is the space above the rule.
    gap = latex.index("\\setlength{\\abovetopsep}{6pt}")
    assert gap < latex.index("\\toprule") and gap < latex.index("\\caption{")


def test_a_table_of_one_column_under_an_outer_header_is_as_wide_as_that_header():
    """Grouping the columns by their outer header: with one column, a list of keys would group by a one-element
    tuple (pandas warns that it will), whose width is not the header's."""
    header = "A long outer header over one short column"
    frame = pd.DataFrame([["1"]], columns=pd.MultiIndex.from_tuples([(header, "n")]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert width_pt(frame) >= text_width_pt(header) + COLUMN_GAP_PT
