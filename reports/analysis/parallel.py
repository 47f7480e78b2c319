"""Independent parts of the analysis computed at once in forked worker processes.

A forked child inherits the parent's memory, so the analysis frame (hundreds of MB at
corpus scale) is shared, not sent: only each part's result (a few tables) comes back.
Used where processes may be started (`usable_workers`): the `report` command, not a
Celery worker (a daemon) nor a web request.
"""

import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

_CALLS: list = []  # the parts of the current `run_forked`, read by its children by index


def usable_workers() -> int:
    """Processes this one may fork for parallel work: one per CPU it may use, 0 with one CPU or inside a daemon.

    A Celery prefork worker is a daemon, and a daemon may not start processes.
    """
    if multiprocessing.current_process().daemon or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cpus if cpus > 1 else 0


def _call(index):
    return _CALLS[index]()


def run_forked(calls, workers: int) -> list:
    """`[call() for call in calls]`, computed by `workers` forked processes (here when fewer than two).

    Parts are handed out in the order of `calls`: put the longest first.
    """
    global _CALLS
    if workers < 2 or len(calls) < 2:
        return [call() for call in calls]
    _CALLS = list(calls)
    # Frozen objects are skipped by the children's garbage collector, which would otherwise
    # touch, and so copy, every page of the parent's objects.
    gc.freeze()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_call, range(len(calls))))
    finally:
        _CALLS = []
        gc.unfreeze()
