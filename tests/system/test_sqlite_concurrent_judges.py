"""The embedded default holds a real sitting: concurrent judges on SQLite behind a multi-process server.

Sixteen judges arrive within a fraction of a second at gunicorn with three
worker processes sharing one SQLite file (WAL, busy timeout, IMMEDIATE
writes), join, train, answer, double-click, go back, reload and resume.
Demand (16 x 6 pairs) exceeds supply (30 pairs x overlap 3), so the last
slots are raced for. Every response must succeed and every invariant of the
load harness hold.
"""

import pytest
from django.db import connection

from bench import load_judges
from tests import servers

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

WEB_WORKERS = 3


@pytest.fixture
def web():
    if connection.vendor != "sqlite":
        pytest.skip("this is the SQLite run; tests/system/test_load_invariants.py covers PostgreSQL")
    env = load_judges.server_env(servers.database_env(connection), "redis://127.0.0.1:1/0")
    port = servers.free_port()
    process = load_judges.start_gunicorn(env, port, workers=WEB_WORKERS)
    load_judges.warm_up(port, WEB_WORKERS)
    yield port
    servers.stop(process)


def test_sixteen_judges_joining_and_answering_at_once_on_sqlite_see_no_error(web, monkeypatch):
    monkeypatch.setattr(load_judges, "REQUEST_TIMEOUT", 120)  # generous: cores may be saturated
    load_judges.make_campaign("sqlite", pairs=30, overlap=3, per_judge=6, control_share=0.1)
    habits = load_judges.Habits(double_click=0.15, go_back=0.1, reload=0.15, resume=0.3)

    stats, ledger, _seconds = load_judges.run_judges(
        web, "sqlite", judges=16, habits=habits, time_limit=300, max_items=40, stagger_s=0.3
    )

    results = load_judges.check_invariants("sqlite", stats, ledger)
    failed = [f"{name}: {detail}" for name, passed, detail in results if not passed]
    assert not failed, failed
    assert not stats.errors and all(status < 500 for status in stats.statuses), dict(stats.statuses)
    assert ledger.outcomes["failed"] == 0 and ledger.outcomes["out_of_time"] == 0, dict(ledger.outcomes)
    assert ledger.outcomes["finished"] + ledger.outcomes["turned_away"] == 16, dict(ledger.outcomes)
    assert len(stats.latencies["join"]) >= 12, "at least twelve judges joined concurrently"
    assert len(ledger.acknowledged) >= 90, "every slot of every pair should have been judged"
