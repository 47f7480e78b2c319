"""Celery app: LLM work goes to queue `gpu`, everything else to `cpu`."""

import os

from celery import Celery
from celery.signals import task_received, worker_ready

from parasol.startup import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")

app = Celery("parasol")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Fired just before the settings are read: a bad environment is one line, not a traceback.
app.on_configure.connect(lambda sender, **kwargs: settings_or_exit(), weak=False)
app.autodiscover_tasks()


@worker_ready.connect
def _watch_workers(sender, **kwargs):
    """A worker says it is alive and puts back the tasks of dead ones from the start (parasol/queues.py)."""
    from parasol.queues import watch_this_worker

    watch_this_worker(sender.hostname)


@task_received.connect
def _note_holder(sender, request, **kwargs):
    """Which worker took a message: Redis does not know, and a worker that died whole never gives it back."""
    from parasol.queues import note_holder

    note_holder(request)
