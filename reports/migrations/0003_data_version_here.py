"""The data version's triggers made from `reports.data_version` (with PostgreSQL's TRUNCATE ones), and the
SQLite scoring seal deleted: every score now counts through its trigger."""

import importlib

from django.db import migrations

from reports import data_version


def make_triggers(apps, schema_editor):
    data_version.remake(schema_editor)


def make_sealed_triggers(apps, schema_editor):
    """Back to 0002: its triggers, which honour the seal it made."""
    data_version.drop(schema_editor)
    importlib.import_module("reports.migrations.0002_score_seal").remake_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("reports", "0002_score_seal")]

    operations = [
        migrations.RunPython(make_triggers, make_sealed_triggers),
        migrations.DeleteModel(name="ScoreSeal"),
    ]
