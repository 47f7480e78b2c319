"""`report --latex` of a fixture with every registered metric (and the toy), of every task type (and the toy):
every table compiles within its page (the text width, or a landscape page), in type of 8pt or more, never
scaled; captions numbered once, nothing said twice; no registry name or token id in a cell."""

import re

import pytest
from django.core.management import call_command

from campaigns.task_types import get_task_type
from reports.analysis.latex import latex_document
from tests.pdflatex import PDFLATEX_MARKS, compile_latex
from tests.report_fixtures import report_campaign
from tests.reports.table_rules import MIN_POINTS, caption_problems, leaked_names
from tests.reports.test_latex import font_sizes
from tests.reports.test_report_presentation import latex_rows, unescape
from tests.toys import every_task_type

pytestmark = [*PDFLATEX_MARKS, pytest.mark.report]


def compile_log(folder, tables):
    """The log of the tables in an article whose every tabular logs its type size."""
    (folder / "probed.tex").write_text(latex_document(tables, probe=True), encoding="utf-8")
    return compile_latex(folder, "probed")


def check_table(name, tex):
    assert "\\resizebox" not in tex and "\\scalebox" not in tex, name
    for caption in re.findall(r"\\caption\{(.*)\}", tex):
        assert caption_problems(unescape(caption)) == [], (name, caption)
    parts = re.split(r"\\begin\{(?:table|sidewaystable|longtable)\}", tex)[1:]
    cells = [unescape(cell) for part in parts for row in latex_rows(part) for cell in row]
    assert {cell: leaked_names(cell) for cell in cells if leaked_names(cell)} == {}, name


@every_task_type
def test_every_latex_table_of_a_full_report_fits_its_page_at_8pt_or_more(researcher, task_type, toy_metric, tmp_path):
    campaign = report_campaign(researcher, task_type)
    # Human labels where the type's answers vote paraphrase or not; the gold labels otherwise.
    label_source = "human" if get_task_type(task_type).vote else "gold"
    call_command(
        "report", campaign.slug, "--label-source", label_source, "--out", str(tmp_path), "--latex", "--no-figures"
    )
    tables = {path.stem: path.read_text(encoding="utf-8") for path in sorted(tmp_path.glob("*.tex"))}
    tables.pop("tables")
    # At least the type's own table, Systems and Estimates (a type with one table of its own, as the toy, has three).
    assert "systems" in tables and len(tables) >= 3, sorted(tables)
    for name, tex in tables.items():
        check_table(name, tex)
    log = compile_log(tmp_path, list(tables.values()))
    overfull = re.findall(r"Overfull \\[hv]box \([\d.]+pt too (?:wide|high)\)[^\n]*\n[^\n]*", log)
    assert overfull == [], overfull
    assert "Float too large" not in log
    sizes = font_sizes(log)
    assert len(sizes) >= len(tables) and min(sizes) >= MIN_POINTS, sizes
