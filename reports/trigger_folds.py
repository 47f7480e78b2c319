"""A bulk insert of scores advances the data version once per statement on SQLite too.

PostgreSQL runs the score triggers once per statement. SQLite has row-level triggers only, so each stored
score ran one UPDATE of the campaign's version: for `lev`, whose scoring loop is almost all database,
that cost a third more time. Inside the writer's transaction, which holds SQLite's only write lock (no
other connection can write until it ends, and none sees its changes before), the INSERT trigger on scores
is dropped, the rows inserted, the trigger made again from its own stored SQL, and the version of the
campaigns of the written pairs advanced once. A failure rolls back to the savepoint taken first, trigger
included. Every other writer (the ORM, raw SQL, the admin) still meets the trigger.
"""

import importlib
from contextlib import contextmanager

from django.db import connection, transaction

_triggers = importlib.import_module("reports.migrations.0001_data_version_triggers")

SCORES_INSERTED = _triggers._name("scoring_score", "INSERT")


@contextmanager
def scores_inserted(pair_pks):
    """Around the insert of scores for `pair_pks`: on SQLite, their campaigns' version advanced once."""
    if connection.vendor != "sqlite":
        yield  # statement-level triggers already
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = %s", [SCORES_INSERTED])
        row = cursor.fetchone()
        if row is None:  # no trigger to fold (dropped by hand, or a bench's run without triggers)
            yield
            return
        cursor.execute(f"DROP TRIGGER {SCORES_INSERTED}")
        yield
        cursor.execute(row[0])
        _advance_once(cursor, pair_pks)


def _advance_once(cursor, pair_pks):
    chunk = max(1, connection.features.max_query_params - 1)
    for start in range(0, len(pair_pks), chunk):
        part = list(pair_pks[start : start + chunk])
        campaigns = f"SELECT DISTINCT campaign_id FROM campaigns_pair WHERE id IN ({', '.join(['%s'] * len(part))})"
        cursor.execute(_triggers._bump("sqlite", "scores_added", campaigns), part)
