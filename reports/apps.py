from celery.signals import worker_init
from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class ReportsConfig(AppConfig):
    name = "reports"

    def ready(self):
        from django.core import checks

        from . import data_version
        from .checks import data_version_triggers_check

        post_migrate.connect(data_version.remake_after_migrate, sender=self)
        connection_created.connect(data_version.turn_on_recursive_triggers)
        checks.register(data_version_triggers_check, checks.Tags.database, deploy=True)
        # A worker, like the web server (parasol/wsgi.py), does not start without the triggers.
        worker_init.connect(_data_version_or_exit, weak=False)
        worker_init.connect(_load_report_libraries, weak=False)


def _data_version_or_exit(**kwargs):
    from .data_version import data_version_or_exit

    data_version_or_exit()


def _load_report_libraries(sender, **kwargs):
    """A worker that computes reports imports the analysis's libraries as it starts (before its pool forks,
    so every process of the pool has them): otherwise the first report after a start, the one a researcher
    waits for on the page, imports them (ppi-python, scipy.stats, crowd-kit, matplotlib: 3.6 s in one
    measurement on a shared 2-core machine)."""
    from parasol.queues import REPORTS

    if REPORTS in sender.app.amqp.queues.consume_from:  # the queues `-Q` selected, by name
        from reports.analysis import load_libraries

        load_libraries()
