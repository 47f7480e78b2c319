"""No CSV cell a spreadsheet would run as a formula: header cells as data cells, and after a line break (issue 25).

Every CSV Parasol writes goes through `campaigns.exports.write_csv`, the one guard: the pairs
export (page, API, command), the report tables, the span tables, `score_file`.
"""

import csv
import io
import re
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from campaigns.exports import neutralise_formula, write_csv
from campaigns.importers import import_rows
from reports.analysis.report import TABLE_NAMES
from tests.factories import without_controls

REPO = Path(__file__).resolve().parents[2]
HOSTILE_KEYS = ['=HYPERLINK("http://example.invalid/x","open")', "+1+1", "@SUM(1)", "-1", "\t=1", "\r=1"]
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def formula_cells(text):
    """The cells of a CSV text that a spreadsheet would evaluate: at the start, or after a line break inside."""
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    return [cell for cell in cells if cell.startswith(TRIGGERS) or re.search(r"[\r\n]\s*(?:[=+@]|-\S)", cell)]


def test_header_cells_are_neutralised_as_data_cells():
    frame = pd.DataFrame([["x"] * len(HOSTILE_KEYS)], columns=HOSTILE_KEYS)
    buffer = io.StringIO()
    write_csv(frame, buffer)
    header = next(csv.reader(io.StringIO(buffer.getvalue())))
    assert header == [neutralise_formula(key) for key in HOSTILE_KEYS]
    assert all(cell.startswith("'") for cell in header) and formula_cells(buffer.getvalue()) == []


@pytest.mark.parametrize("cell", ["note\n=1+1", "note\r=1+1", "note\r\n@SUM(1)", "note\n+1", "note\n-cmd"])
def test_a_formula_after_a_line_break_inside_a_cell_is_neutralised(cell):
    buffer = io.StringIO()
    write_csv(pd.DataFrame({"comment": [cell]}), buffer)
    (back,) = [row["comment"] for row in csv.DictReader(io.StringIO(buffer.getvalue()))]
    assert formula_cells(buffer.getvalue()) == [] and back.replace("'", "", 1) == cell


def test_a_negative_number_and_a_dash_in_prose_stay_as_written():
    buffer = io.StringIO()
    write_csv(pd.DataFrame({"score": [-0.5], "note": ["one line\n- a list item"]}), buffer)
    row = next(csv.DictReader(io.StringIO(buffer.getvalue())))
    assert row == {"score": "-0.5", "note": "one line\n- a list item"}


@pytest.fixture
def hostile_campaign(campaign):
    """Pairs whose metadata keys and values are formulas, spread over rows (as the review sent them)."""
    without_controls(campaign)
    rows = [
        {
            "source": f"Source {i}.",
            "hypothesis": "fine\n=1+1",
            "corpus": "=1+1" if i % 2 else "@corpus",
            "metadata": {key: "value\r@SUM(1)", "system": f"-sys{i % 2}"},
        }
        for i, key in enumerate(HOSTILE_KEYS)
    ]
    import_rows(campaign, rows)
    return campaign


def test_the_pairs_csv_has_no_formula_cell_from_any_path(client, researcher, hostile_campaign, tmp_path):
    client.force_login(researcher)
    page = client.get(reverse("reports-export-pairs", args=[hostile_campaign.slug]))
    api = client.get(f"/api/campaigns/{hostile_campaign.slug}/export/?kind=pairs")
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", hostile_campaign.slug, "--out", str(out), stdout=io.StringIO())
    texts = [
        b"".join(page.streaming_content).decode(),
        b"".join(api.streaming_content).decode(),
        out.read_bytes().decode(),
    ]
    for text in texts:
        header = next(csv.reader(io.StringIO(text)))
        assert {neutralise_formula(key) for key in HOSTILE_KEYS} <= set(header)
        assert formula_cells(text) == []
    assert texts[0] == texts[1]


def test_no_report_table_csv_has_a_formula_cell(client, researcher, hostile_campaign):
    client.force_login(researcher)
    for name in TABLE_NAMES:
        url = reverse("reports-download-report-table", args=[name]) + f"?c={hostile_campaign.slug}"
        response = client.get(url)
        assert response.status_code == 200, name
        assert formula_cells(response.content.decode()) == [], name


def test_every_csv_the_project_writes_goes_through_the_one_guard():
    """No other writer: pandas' to_csv and the csv module's writers are used only inside write_csv."""
    writers = re.compile(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(")
    offenders = []
    for path in REPO.glob("*/**/*.py"):
        relative = path.relative_to(REPO)
        if relative.parts[0] in {".venv", "tests", "bench", "node_modules"} or "node_modules" in relative.parts:
            continue
        if writers.search(path.read_text(encoding="utf-8")) and relative != Path("campaigns/exports.py"):
            offenders.append(str(relative))
    assert offenders == []
