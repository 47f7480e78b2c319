"""`report --latex` of a fixture with all 14 metrics, of each task type: every table compiles within the text width."""

import re
import shutil
import subprocess

import pytest
from django.core.management import call_command

from tests.report_fixtures import TASK_TYPES, report_campaign

pytestmark = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex comes with make system-deps")


def compile_log(folder):
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "tables.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    return (folder / "tables.log").read_text(encoding="utf-8", errors="replace")


@pytest.mark.parametrize("task_type", TASK_TYPES)
def test_every_latex_table_of_a_14_metric_report_fits_the_text_width(researcher, task_type, tmp_path):
    campaign = report_campaign(researcher, task_type)
    label_source = "human" if task_type == "similarity" else "gold"
    call_command(
        "report", campaign.slug, "--label-source", label_source, "--out", str(tmp_path), "--latex", "--no-figures"
    )
    tables = sorted(path.stem for path in tmp_path.glob("*.tex") if path.stem != "tables")
    assert "systems" in tables and len(tables) >= 4, tables
    log = compile_log(tmp_path)
    overfull = re.findall(r"Overfull \\hbox \([\d.]+pt too wide\)[^\n]*\n[^\n]*", log)
    assert overfull == [], overfull
    assert "Float too large" not in log
