"""The triggers that advance each campaign's data version (`reports.models.DataVersion`) on every write a report reads.

They are the database's own record of every write to pairs, the campaign row, judgments, judges and
scores, whatever wrote it: the ORM, `QuerySet.update`, raw SQL, the admin, a data migration.
PostgreSQL: statement-level triggers with transition tables for pairs, judgments and scores (a bulk
insert advances a version once), row-level ones for campaigns and judges (a column list needs them),
and `ON TRUNCATE` triggers that advance every campaign. SQLite has row-level triggers only, and its
`REPLACE` deletes the row it replaces without firing DELETE triggers unless `recursive_triggers` is on:
every connection Django opens turns it on (`turn_on_recursive_triggers`).

A version moves by a random step (1 to 2**31), and starts at a random value, so a version written by a
transaction that was rolled back, or by a database migrated back and forth, is not given again to other data.

Migration `0003_data_version_here` makes them; after every `migrate` they are made again from the schema
as it is then (`remake`: a later migration that makes SQLite rebuild a table drops its triggers, and a
new campaign column must be watched). `missing_triggers` tells which are gone: the web and worker
processes refuse to start without them, and `check --deploy` names them.
"""

from django.db import connections

PARTS = ("pairs", "judgments", "scores_added", "scores_changed")
# Columns of the campaign row a report does not read and that change without a report changing:
# `assignment_seq` moves at every assignment, `updated_at` at every save.
CAMPAIGN_COLUMNS_IGNORED = ("assignment_seq", "updated_at")
# What of a judge a report reads (through the judgments it counts): who it is, its campaign, exclusion, level.
JUDGE_COLUMNS_READ = ("id", "campaign_id", "excluded", "english_level")
VENDORS = ("sqlite", "postgresql")
HOW_TO_RESTORE = (
    "run `python manage.py migrate` (it makes every data version trigger again), then clear the report cache "
    "(docs/deployment.md, After a restore)"
)

STEP = {
    "sqlite": "(1 + (random() & 2147483647))",
    "postgresql": "(1 + floor(random() * 2147483648)::bigint)",
}
START = {"sqlite": "(random() & 2147483647)", "postgresql": "floor(random() * 2147483648)::bigint"}


def _bump(vendor, part, campaigns=None, single=False):
    """Advance `part` of the `campaigns` (a SELECT; None: every campaign); `single`: it gives one row at most,
    compared with `=` (a SQLite trigger runs this once per row, and `=` costs it a third of what `IN` does)."""
    update = f"UPDATE reports_dataversion SET version = version + {STEP[vendor]} WHERE part = '{part}'"
    if campaigns is None:
        return update
    return f"{update} AND campaign_id {f'= ({campaigns})' if single else f'IN ({campaigns})'}"


def _campaigns_of_pairs(rows):
    return f"SELECT {rows}.campaign_id" if rows in ("NEW", "OLD") else f"SELECT campaign_id FROM {rows}"


def _campaigns_of_pair_ids(rows):
    """Campaigns of the pairs that judgments or scores (`rows`) belong to."""
    if rows in ("NEW", "OLD"):  # a SQLite row
        return f"SELECT campaign_id FROM campaigns_pair WHERE id = {rows}.pair_id"
    return f"SELECT campaign_id FROM campaigns_pair WHERE id IN (SELECT pair_id FROM {rows})"


def _campaigns_of_judge(row):
    """The judge's campaign and the campaigns of the pairs it judged (another campaign's, if SQL put them there)."""
    return (
        f"SELECT {row}.campaign_id UNION SELECT p.campaign_id FROM annotation_judgment j "
        f"JOIN campaigns_pair p ON p.id = j.pair_id WHERE j.judge_id = {row}.id"
    )


def _written(campaigns_of, event, new, old):
    """The campaigns of the rows an event wrote: `new` and `old` name them (NEW/OLD, or transition tables)."""
    if event == "INSERT":
        return campaigns_of(new)
    if event == "DELETE":
        return campaigns_of(old)
    return f"{campaigns_of(new)} UNION {campaigns_of(old)}"


# (table, part of the version it advances, event, campaigns of its rows) for the tables written in bulk.
BULK = [
    ("campaigns_pair", "pairs", "INSERT", _campaigns_of_pairs),
    ("campaigns_pair", "pairs", "UPDATE", _campaigns_of_pairs),
    ("campaigns_pair", "pairs", "DELETE", _campaigns_of_pairs),
    ("annotation_judgment", "judgments", "INSERT", _campaigns_of_pair_ids),
    ("annotation_judgment", "judgments", "UPDATE", _campaigns_of_pair_ids),
    ("annotation_judgment", "judgments", "DELETE", _campaigns_of_pair_ids),
    ("scoring_score", "scores_added", "INSERT", _campaigns_of_pair_ids),
    ("scoring_score", "scores_changed", "UPDATE", _campaigns_of_pair_ids),
    ("scoring_score", "scores_changed", "DELETE", _campaigns_of_pair_ids),
]
# PostgreSQL's TRUNCATE (no rows to name): the parts it empties, advanced for every campaign. A campaign
# TRUNCATE cascades to the versions themselves: the campaigns made after it start at random ones.
TRUNCATED = {
    "campaigns_pair": ("pairs",),
    "annotation_judgment": ("judgments",),
    "annotation_judge": ("judgments",),
    "scoring_score": ("scores_changed",),
}
ROW = [
    ("campaigns_campaign", "INSERT"),
    ("campaigns_campaign", "UPDATE"),
    ("annotation_judge", "INSERT"),
    ("annotation_judge", "UPDATE"),
    ("annotation_judge", "DELETE"),
]


def trigger_name(table, event):
    return f"parasol_version_{table}_{event.lower()}"


def triggers(vendor) -> list[tuple[str, str]]:
    """(table, trigger name) of every trigger the data version needs on `vendor`."""
    events = [(table, event) for table, _part, event, _campaigns_of in BULK] + ROW
    if vendor == "postgresql":
        events += [(table, "TRUNCATE") for table in TRUNCATED]
    return [(table, trigger_name(table, event)) for table, event in events]


def _campaign_columns(connection):
    from campaigns.models import Campaign

    with connection.cursor() as cursor:
        present = {c.name for c in connection.introspection.get_table_description(cursor, Campaign._meta.db_table)}
    return [f.column for f in Campaign._meta.concrete_fields if f.column in present - set(CAMPAIGN_COLUMNS_IGNORED)]


def _row_bodies(vendor, campaign_columns):
    """Campaign and judge triggers (row-level on both databases): (table, event, body)."""
    insert_parts = " UNION ALL ".join(f"SELECT NEW.id, '{part}', {START[vendor]}" for part in PARTS)
    return [
        (
            "campaigns_campaign",
            "INSERT",
            f"INSERT INTO reports_dataversion (campaign_id, part, version) {insert_parts}",
        ),
        (
            "campaigns_campaign",
            f"UPDATE OF {', '.join(campaign_columns)}",
            _bump(vendor, "pairs", "SELECT OLD.id UNION SELECT NEW.id"),
        ),
        ("annotation_judge", "INSERT", _bump(vendor, "judgments", "SELECT NEW.campaign_id", single=True)),
        (
            "annotation_judge",
            f"UPDATE OF {', '.join(JUDGE_COLUMNS_READ)}",
            _bump(vendor, "judgments", f"{_campaigns_of_judge('OLD')} UNION {_campaigns_of_judge('NEW')}"),
        ),
        ("annotation_judge", "DELETE", _bump(vendor, "judgments", _campaigns_of_judge("OLD"))),
    ]


def sqlite_statements(campaign_columns) -> list[str]:
    """CREATE TRIGGER statements for SQLite: one row-level trigger per table and event."""
    statements = [
        f"CREATE TRIGGER {trigger_name(table, event)} AFTER {event} ON {table} FOR EACH ROW BEGIN "
        f"{_bump('sqlite', part, _written(campaigns_of, event, 'NEW', 'OLD'), single=event != 'UPDATE')}; END"
        for table, part, event, campaigns_of in BULK
    ]
    for table, event, body in _row_bodies("sqlite", campaign_columns):
        name = trigger_name(table, event.split()[0])
        statements.append(f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW BEGIN {body}; END")
    return statements


def postgresql_statements(campaign_columns) -> list[str]:
    """Trigger functions and triggers for PostgreSQL: statement-level with transition tables where it can."""
    statements = []
    for table, part, event, campaigns_of in BULK:
        name = trigger_name(table, event)
        referencing = {
            "INSERT": "REFERENCING NEW TABLE AS new_rows",
            "UPDATE": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
            "DELETE": "REFERENCING OLD TABLE AS old_rows",
        }[event]
        body = _bump("postgresql", part, _written(campaigns_of, event, "new_rows", "old_rows"))
        create = f"CREATE TRIGGER {name} AFTER {event} ON {table} {referencing} FOR EACH STATEMENT"
        statements += [_pg_function(name, body), f"{create} EXECUTE FUNCTION {name}()"]
    for table, event, body in _row_bodies("postgresql", campaign_columns):
        name = trigger_name(table, event.split()[0])
        statements += [
            _pg_function(name, body),
            f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()",
        ]
    for table, parts in TRUNCATED.items():
        name = trigger_name(table, "TRUNCATE")
        statements += [
            _pg_function(name, "; ".join(_bump("postgresql", part) for part in parts)),
            f"CREATE TRIGGER {name} AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
        ]
    return statements


def _pg_function(name, body):
    return (
        f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body}; RETURN NULL; END $$"
    )


def drop(schema_editor):
    """Every data version trigger (and PostgreSQL function) this module or an earlier migration made."""
    vendor = schema_editor.connection.vendor
    for table, name in triggers("postgresql"):  # the longest list: TRUNCATE ones too
        if vendor == "sqlite":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}", params=None)
        else:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}", params=None)
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}()", params=None)


def remake(schema_editor):
    """Drop the triggers and make them again from the schema as it is now (the tables must exist)."""
    vendor = schema_editor.connection.vendor
    if vendor not in VENDORS:
        raise RuntimeError(f"Parasol's data version triggers exist for SQLite and PostgreSQL, not {vendor}.")
    drop(schema_editor)
    columns = _campaign_columns(schema_editor.connection)
    statements = sqlite_statements(columns) if vendor == "sqlite" else postgresql_statements(columns)
    for statement in statements:
        schema_editor.execute(statement, params=None)


def remake_after_migrate(sender, using="default", apps=None, **kwargs):
    """After every `migrate` (`post_migrate`): the triggers made again, if the versions' table exists."""
    if apps is None:
        return  # `flush` (a test's teardown) empties tables without rebuilding any: the triggers stay
    connection = connections[using]
    if connection.vendor in VENDORS and "reports_dataversion" in connection.introspection.table_names():
        with connection.schema_editor() as editor:
            remake(editor)


def existing_triggers(connection) -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgenabled <> 'D'")
        return {name for (name,) in cursor.fetchall()}


def missing_triggers(connection) -> list[str]:
    """The data version triggers the database lacks (or has disabled), by name; [] before it is migrated
    that far (no versions' table: Django's own check names the migrations to run)."""
    if connection.vendor not in VENDORS or "reports_dataversion" not in connection.introspection.table_names():
        return []
    found = existing_triggers(connection)
    return [name for _table, name in triggers(connection.vendor) if name not in found]


def problem(connection) -> str | None:
    """One line naming the missing triggers and how to restore them, or None."""
    missing = missing_triggers(connection)
    if not missing:
        return None
    return (
        f"the database lacks the data version trigger(s) {', '.join(missing)}, so cached reports would go stale "
        f"after the writes they count: {HOW_TO_RESTORE}."
    )


def turn_on_recursive_triggers(sender, connection, **kwargs):
    """`connection_created`: SQLite's REPLACE then fires the DELETE triggers of the rows it replaces."""
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA recursive_triggers = ON")


def data_version_or_exit():
    """After Django is set up (a web or worker process): stop, naming them, if the data version's triggers are
    missing from a migrated database; reports would otherwise go stale unnoticed. A database that cannot be
    read now is left to the requests that need it (it may be restarting). Exits as `parasol.startup` does."""
    from django.db import DatabaseError, connection

    from parasol.startup import refuse_to_start

    try:
        found = problem(connection)
    except DatabaseError:
        found = None
    finally:
        if not connection.in_atomic_block:
            connection.close()  # opened before the server forks its workers: none of them may share it
    if found:
        refuse_to_start(found)
