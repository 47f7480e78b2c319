"""Parasol's Celery app itself: made and configured here, imported by `parasol.celery` (which adds the worker
signals) and by `parasol.queues` (which talks to its broker). Apart so that neither imports the other's module:
`parasol.celery` wires the signals to `parasol.queues`, and `parasol.queues` needs only the app."""

import os

from celery import Celery

from parasol.startup import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")

app = Celery("parasol")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Fired just before the settings are read: a bad environment is one line, not a traceback.
app.on_configure.connect(lambda sender, **kwargs: settings_or_exit(), weak=False)
app.autodiscover_tasks()
