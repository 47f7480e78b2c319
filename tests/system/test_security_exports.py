"""Exports and imports through gunicorn with production settings (issue 25): on SQLite, and on PostgreSQL in PG_TESTS.

Span campaigns' pairs CSV used to be cut mid-stream (a 200, then a short file); header cells
carried formulas; metadata keys spread over rows had no cap.
"""

import csv
import io
import subprocess
import sys

import pytest
import requests
from django.db import connection
from rest_framework.authtoken.models import Token

from annotation import assignment as assign
from bench import load_judges
from tests import servers
from tests.factories import add_pairs, make_judge, without_controls
from tests.system.conftest import production_login

TAGGINGS = {
    "spans": {"source": [1], "hypothesis": []},
    "similarity+spans": {"answer": "same_meaning", "source": [1], "hypothesis": [0]},
}


def api_session(user):
    session = requests.Session()
    session.headers["Authorization"] = f"Token {Token.objects.get_or_create(user=user)[0].key}"
    return session


def span_campaign(campaign, task_type):
    """Four pairs: two tagged by two judges, two untagged (the review's crash)."""
    campaign.task_type = task_type
    campaign.save()
    without_controls(campaign)
    pairs = add_pairs(campaign, 4)
    for _ in range(2):
        judge = make_judge(campaign)
        for position, pair in enumerate(pairs[:2], start=1):
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, TAGGINGS[task_type])
    return campaign


def pair_ids(text):
    return sorted(row["pair_id"] for row in csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("task_type", TAGGINGS)
def test_a_span_campaigns_pairs_csv_is_whole_from_the_page_the_api_and_the_command(
    gunicorn, campaign, researcher, settings, tmp_path, task_type
):
    span_campaign(campaign, task_type)
    page = production_login(researcher, settings, gunicorn).get(
        f"{gunicorn}/campaigns/demo/export/pairs.csv", timeout=60
    )
    api = api_session(researcher).get(f"{gunicorn}/api/campaigns/demo/export/?kind=pairs", timeout=60)
    out = tmp_path / "pairs.csv"
    env = load_judges.server_env(servers.database_env(connection), "redis://127.0.0.1:1/0")
    command = [sys.executable, "manage.py", "export_pairs", "demo", "--out", str(out)]
    finished = subprocess.run(command, cwd=servers.REPO, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    for text in (page.text, api.text, out.read_bytes().decode()):
        assert "EXPORT FAILED" not in text
        assert pair_ids(text) == ["p1", "p2", "p3", "p4"]
    assert page.content == api.content


def test_metadata_keys_spread_over_rows_are_capped(gunicorn, campaign, researcher):
    """Two keys per row, different in each: past 200 distinct keys (the default) the import is refused whole."""
    rows = [{"source": f"S {i}.", "hypothesis": f"H {i}.", "metadata": {f"a{i}": 1, f"b{i}": 2}} for i in range(101)]
    response = api_session(researcher).post(f"{gunicorn}/api/campaigns/demo/pairs/", json=rows, timeout=60)
    assert response.status_code == 409  # the keys add up over rows (and with the campaign's own): a conflict
    assert "PARASOL_METADATA_MAX_KEYS" in response.json()["detail"] and "limit of 200" in response.json()["detail"]
    assert campaign.pairs.filter(is_training=False).count() == 0
    accepted = api_session(researcher).post(f"{gunicorn}/api/campaigns/demo/pairs/", json=rows[:100], timeout=60)
    assert accepted.status_code == 201


def test_formula_header_cells_are_neutralised_in_the_export(gunicorn, campaign, researcher):
    without_controls(campaign)
    keys = ['=HYPERLINK("http://example.invalid","x")', "+1+1", "@SUM(1)", "-1"]
    rows = [{"source": "A.", "hypothesis": "B.", "metadata": {key: "v\n=1+1" for key in keys}}]
    assert api_session(researcher).post(f"{gunicorn}/api/campaigns/demo/pairs/", json=rows, timeout=60).ok
    text = api_session(researcher).get(f"{gunicorn}/api/campaigns/demo/export/?kind=pairs", timeout=60).text
    header, row = list(csv.reader(io.StringIO(text)))
    assert [cell for cell in header if cell[:1] in ("=", "+", "-", "@")] == []
    assert {"'" + key for key in keys} <= set(header)
    assert all("\n=" not in cell for cell in row)
