"""The API's published schema is its contract (issue 36): schemathesis finds no gap between them.

A real gunicorn with production settings (DEBUG off) on the test database (SQLite here; PostgreSQL
in PG_TESTS) and schemathesis's own CLI against `/api/schema/` with a researcher's token: every
check (`--checks all`: statuses, content types, response bodies, schema-valid bodies accepted and
schema-breaking ones refused, auth, methods) over every phase it runs by default (coverage,
fuzzing, stateful links), with a bounded number of examples per operation.
"""

import os
import subprocess
import sys

import pytest
from rest_framework.authtoken.models import Token

from generation.models import create_run
from tests import servers
from tests.factories import add_pairs

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# Examples per operation and phase: enough to reach every rule of the 16 operations, bounded so a
# run stays within a few minutes on two busy cores. The seed is fixed so that a failure reproduces;
# PARASOL_SCHEMATHESIS_SEED tries another (`st replay` and the printed curl commands replay a case).
EXAMPLES = os.environ.get("PARASOL_SCHEMATHESIS_EXAMPLES", "10")
SEED = os.environ.get("PARASOL_SCHEMATHESIS_SEED", "36")


@pytest.fixture
def contract_server(tmp_path):
    from django.db import connection

    # Throttling would answer 429 (documented, but it would hide the rest); a cache of its own.
    env = {"PARASOL_API_USER_RATE": "1000000/minute", "PARASOL_CACHE_DIR": str(tmp_path / "cache")}
    with servers.production_gunicorn(connection, **env) as url:
        yield url


# Half the time a path or body names a campaign and a run that exist, so that the operations behind
# them are reached (not only their 404s); the other half, whatever schemathesis generates.
CONFIG = """
[dictionaries.campaigns]
values = ["{slug}"]
[dictionaries.runs]
values = [{run}]
[parameters]
"path.slug" = {{ dictionary = "campaigns", probability = 0.5 }}
"path.id" = {{ dictionary = "runs", probability = 0.5 }}
"body.campaign" = {{ dictionary = "campaigns", probability = 0.5 }}
"""


def test_schemathesis_finds_no_gap_between_the_schema_and_the_server(contract_server, campaign, researcher, tmp_path):
    add_pairs(campaign, 3)  # a campaign of the researcher's own, with pairs, for the links to follow
    run = create_run(campaign, sources=["The cat sleeps."], templates=["naive"])
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.format(slug=campaign.slug, run=run.pk))
    token = Token.objects.create(user=researcher).key
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(config),
        "run", f"{contract_server}/api/schema/",
        "--header", f"Authorization: Token {token}",
        "--checks", "all",
        "--max-examples", EXAMPLES,
        "--seed", SEED,
        "--workers", "1",
        "--no-shrink",
        "--request-timeout", "60",
        "--wait-for-schema", "60",
        "--report-dir", str(tmp_path / "report"),
    ]  # fmt: skip
    env = dict(os.environ, SCHEMATHESIS_HOOKS="", NO_COLOR="1")
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert result.returncode == 0, result.stdout[-20_000:] + result.stderr[-5_000:]
    assert "16/16" in result.stdout, "every operation of the schema is tested"
