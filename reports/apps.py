import importlib

from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate


class ReportsConfig(AppConfig):
    name = "reports"

    def ready(self):
        from campaigns import data_version

        from .models import ScoreSeal

        post_migrate.connect(refresh_data_version_triggers, sender=self)
        data_version.provide_score_sealer(ScoreSeal.counting)


def refresh_data_version_triggers(sender, using="default", apps=None, **kwargs):
    """After every `migrate`: the data version's triggers dropped and made again from the schema as it is now.

    A later migration may rebuild a table (SQLite drops its triggers then) or add a campaign column that the
    campaign row's UPDATE trigger must watch: remaking them here keeps them complete whatever migrations came
    after the one that created them (`reports/migrations/0001_data_version_triggers.py`).
    """
    if apps is None:
        return  # `flush` (a test's teardown) empties tables without rebuilding any: the triggers stay
    connection = connections[using]
    if connection.vendor not in ("sqlite", "postgresql"):
        return
    if "reports_dataversion" not in connection.introspection.table_names():
        return  # migrated back before the data version: no triggers to keep
    triggers = importlib.import_module("reports.migrations.0001_data_version_triggers")
    with connection.schema_editor() as editor:
        triggers.drop_triggers(apps, editor)
        triggers.create_triggers(apps, editor)
