"""The seal a SQLite scoring batch holds while it counts its own scores (`reports.models.ScoreSeal`), and the
score INSERT trigger remade to honour it."""

import importlib

from django.db import migrations, models

TRIGGERS = importlib.import_module("reports.migrations.0001_data_version_triggers")


def make_the_seal(apps, schema_editor):
    apps.get_model("reports", "ScoreSeal").objects.create(pk=1)


def remake_triggers(apps, schema_editor):
    TRIGGERS.drop_triggers(apps, schema_editor)
    TRIGGERS.create_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("reports", "0001_data_version_triggers")]

    operations = [
        migrations.CreateModel(
            name="ScoreSeal",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("lo", models.BigIntegerField(null=True)),
                ("hi", models.BigIntegerField(null=True)),
                (
                    "holder",
                    models.ForeignKey(
                        null=True, on_delete=models.deletion.DO_NOTHING, related_name="+", to="reports.scoreseal"
                    ),
                ),
            ],
            options={"constraints": [models.CheckConstraint(condition=models.Q(("pk", 1)), name="one_score_seal")]},
        ),
        migrations.RunPython(make_the_seal, migrations.RunPython.noop),
        migrations.RunPython(remake_triggers, remake_triggers),
    ]
