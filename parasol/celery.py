"""Celery app: LLM work goes to queue `gpu`, everything else to `cpu`."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")

app = Celery("parasol")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
