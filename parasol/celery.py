"""Celery app (`parasol.celeryapp`) and its worker signals: LLM work goes to queue `gpu`, everything else to `cpu`."""

from celery.signals import task_received, worker_ready

from parasol.celeryapp import app

__all__ = ("app",)


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
