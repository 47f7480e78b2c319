"""Each campaign's data version (`reports.models.DataVersion`) and the triggers that advance it.

The triggers are the database's own record of every write a report reads (pairs, the campaign row,
judgments, judges, scores), whatever wrote it. PostgreSQL: statement-level triggers with transition
tables for pairs, judgments and scores (a bulk insert advances a version once), row-level ones for
the rare writes to campaigns and judges (a column list needs them). SQLite has row-level triggers only.

The SQL is written out here as this migration first made it; `reports.data_version` holds the triggers
as they are now, and migration 0003 and every `migrate` make them from there.
A later migration that makes SQLite rebuild one of these tables (most ALTERs do) drops its triggers:
`tests/reports/test_data_version.py` checks every trigger exists once every migration has run.
"""

import random

from django.db import migrations, models

# Columns of the campaign row a report does not read and that change without a report changing:
# `assignment_seq` moves at every assignment, `updated_at` at every save.
CAMPAIGN_COLUMNS_IGNORED = ("assignment_seq", "updated_at")
# What of a judge a report reads (through the judgments it counts): who it is, its campaign, exclusion, level.
JUDGE_COLUMNS_READ = ("id", "campaign_id", "excluded", "english_level")
PARTS = ("pairs", "judgments", "scores_added", "scores_changed")

STEP = {
    "sqlite": "(1 + (random() & 2147483647))",
    "postgresql": "(1 + floor(random() * 2147483648)::bigint)",
}
START = {"sqlite": "(random() & 2147483647)", "postgresql": "floor(random() * 2147483648)::bigint"}


def _bump(vendor, part, campaigns, single=False):
    """Advance `part` of the `campaigns` (a SELECT); `single`: it gives one row at most, compared with `=`
    (a SQLite trigger runs this once per row, and `=` costs it a third of what `IN` does)."""
    match = f"= ({campaigns})" if single else f"IN ({campaigns})"
    return f"UPDATE reports_dataversion SET version = version + {STEP[vendor]} WHERE part = '{part}' AND campaign_id {match}"


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


def _name(table, event):
    return f"parasol_version_{table}_{event.lower()}"


def _campaign_columns(apps):
    campaign = apps.get_model("campaigns", "Campaign")
    return [f.column for f in campaign._meta.concrete_fields if f.column not in CAMPAIGN_COLUMNS_IGNORED]


# SQLite: a score whose pair lies in the range a scoring batch has sealed is counted by that batch
# (`reports.models.ScoreSeal`), not once more by the trigger. No seal (NULL range): every row counts.
SEALED = "coalesce(NEW.pair_id BETWEEN (SELECT lo FROM reports_scoreseal) AND (SELECT hi FROM reports_scoreseal), 0)"


def sqlite_statements(apps):
    """CREATE TRIGGER statements for SQLite: one row-level trigger per table and event."""
    statements = []
    for table, part, event, campaigns_of in BULK:
        bump = _bump("sqlite", part, _written(campaigns_of, event, "NEW", "OLD"), single=event != "UPDATE")
        when = f"WHEN NOT {SEALED} " if (table, event) == ("scoring_score", "INSERT") and _sealable(apps) else ""
        statements.append(
            f"CREATE TRIGGER {_name(table, event)} AFTER {event} ON {table} FOR EACH ROW {when}BEGIN {bump}; END"
        )
    statements += _row_triggers("sqlite", apps)
    return statements


def _sealable(apps):
    """Whether the schema has the seal yet (migration 0002 makes it; this one runs again after every migrate)."""
    try:
        apps.get_model("reports", "ScoreSeal")
    except LookupError:
        return False
    return True


def _row_triggers(vendor, apps):
    """Campaign and judge triggers (row-level on both databases), as (SQLite) statements or PostgreSQL bodies."""
    insert_parts = " UNION ALL ".join(f"SELECT NEW.id, '{part}', {START[vendor]}" for part in PARTS)
    columns = ", ".join(_campaign_columns(apps))
    judge_columns = ", ".join(JUDGE_COLUMNS_READ)
    bodies = [
        (
            "campaigns_campaign",
            "INSERT",
            f"INSERT INTO reports_dataversion (campaign_id, part, version) {insert_parts}",
        ),
        (
            "campaigns_campaign",
            f"UPDATE OF {columns}",
            _bump(vendor, "pairs", "SELECT OLD.id UNION SELECT NEW.id"),
        ),
        ("annotation_judge", "INSERT", _bump(vendor, "judgments", "SELECT NEW.campaign_id", single=True)),
        (
            "annotation_judge",
            f"UPDATE OF {judge_columns}",
            _bump(vendor, "judgments", f"{_campaigns_of_judge('OLD')} UNION {_campaigns_of_judge('NEW')}"),
        ),
        ("annotation_judge", "DELETE", _bump(vendor, "judgments", _campaigns_of_judge("OLD"))),
    ]
    if vendor == "sqlite":
        return [
            f"CREATE TRIGGER {_name(table, event.split()[0])} AFTER {event} ON {table} FOR EACH ROW BEGIN {body}; END"
            for table, event, body in bodies
        ]
    return bodies


def postgresql_statements(apps):
    """Trigger functions and triggers for PostgreSQL: statement-level with transition tables where it can."""
    statements = []
    for table, part, event, campaigns_of in BULK:
        name = _name(table, event)
        referencing = {
            "INSERT": "REFERENCING NEW TABLE AS new_rows",
            "UPDATE": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
            "DELETE": "REFERENCING OLD TABLE AS old_rows",
        }[event]
        statements += _pg_function(
            name, _bump("postgresql", part, _written(campaigns_of, event, "new_rows", "old_rows"))
        )
        statements.append(
            f"CREATE TRIGGER {name} AFTER {event} ON {table} {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {name}()"
        )
    for table, event, body in _row_triggers("postgresql", apps):
        name = _name(table, event.split()[0])
        statements += _pg_function(name, body)
        statements.append(f"CREATE TRIGGER {name} AFTER {event} ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()")
    return statements


def _pg_function(name, body):
    return [f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body}; RETURN NULL; END $$"]


TRIGGERS = [
    *((table, event) for table, _part, event, _campaigns_of in BULK),
    ("campaigns_campaign", "INSERT"),
    ("campaigns_campaign", "UPDATE"),
    ("annotation_judge", "INSERT"),
    ("annotation_judge", "UPDATE"),
    ("annotation_judge", "DELETE"),
]


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise RuntimeError(f"Parasol's data version triggers exist for SQLite and PostgreSQL, not {vendor}.")
    statements = sqlite_statements(apps) if vendor == "sqlite" else postgresql_statements(apps)
    for statement in statements:
        schema_editor.execute(statement, params=None)


def drop_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for table, event in TRIGGERS:
        name = _name(table, event)
        if vendor == "sqlite":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name}", params=None)
        else:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}", params=None)
            schema_editor.execute(f"DROP FUNCTION IF EXISTS {name}()", params=None)


def number_existing_campaigns(apps, schema_editor):
    """A version row per part for the campaigns made before the triggers (new ones get theirs from a trigger),
    at a random start: never 0, which a database migrated back and forth would give again to other data."""
    campaign, data_version = apps.get_model("campaigns", "Campaign"), apps.get_model("reports", "DataVersion")
    data_version.objects.bulk_create(
        data_version(campaign_id=pk, part=part, version=1 + random.randrange(2**31))  # noqa: S311 - not a secret
        for pk in campaign.objects.values_list("pk", flat=True)
        for part in PARTS
    )


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("campaigns", "0012_pair_state_index"),
        ("annotation", "0004_judgment_values"),
        ("scoring", "0004_score_column"),
    ]

    operations = [
        migrations.CreateModel(
            name="DataVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "part",
                    models.CharField(
                        choices=[(part, part) for part in PARTS],
                        max_length=20,
                    ),
                ),
                ("version", models.BigIntegerField()),
                (
                    "campaign",
                    models.ForeignKey(
                        on_delete=models.deletion.CASCADE, related_name="data_versions", to="campaigns.campaign"
                    ),
                ),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("campaign", "part"), name="one_data_version_per_part")]
            },
        ),
        migrations.RunPython(number_existing_campaigns, migrations.RunPython.noop),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
