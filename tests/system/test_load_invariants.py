"""The load harness (bench/load_judges.py) at a small scale: its invariants, not its timings.

Twenty concurrent judges against a real gunicorn (2 workers) on this test's
database (SQLite, or PostgreSQL when DATABASE_URL is set), double-clicking,
going back, reloading and resuming in a fresh cookie jar. Demand (20 judges x 8
pairs) exceeds supply (40 pairs x overlap 3), so the last slots are raced for.
Redis is deliberately unreachable: judging must not need it.
"""

import pytest
from django.db import connection

from bench import load_judges
from tests import servers

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def web():
    env = load_judges.server_env(servers.database_env(connection), "redis://127.0.0.1:1/0")
    port = servers.free_port()
    process = load_judges.start_gunicorn(env, port, workers=2)
    load_judges.warm_up(port, 2)
    yield port
    servers.stop(process)


def test_it_keeps_every_invariant_under_twenty_concurrent_judges(web):
    load_judges.make_campaign("small", pairs=40, overlap=3, per_judge=8)
    habits = load_judges.Habits(double_click=0.15, go_back=0.1, reload=0.15, resume=0.3)

    stats, ledger, _seconds = load_judges.run_judges(
        web, "small", judges=20, habits=habits, time_limit=40, max_items=40, stagger_s=0.5
    )

    results = load_judges.check_invariants("small", stats, ledger)
    failed = [f"{name}: {detail}" for name, passed, detail in results if not passed]
    assert not failed, failed
    assert ledger.outcomes["failed"] == 0 and ledger.outcomes["out_of_time"] == 0, dict(ledger.outcomes)
    assert len(ledger.acknowledged) >= 120, "every slot of every pair should have been judged"
    assert ledger.repeats["double_click"] and ledger.repeats["back"] and ledger.repeats["resume"], ledger.repeats
