"""Forked worker processes: independent parts of a report computed at once, score columns read meanwhile.

A forked child inherits the parent's memory, so the analysis frame (hundreds of MB at corpus
scale) is shared, not sent: only each part's result (a few tables) comes back. Processes are
started only where they may be (`usable_workers`): the `report` command, not a Celery worker
(a daemon) nor a web request.

`report_workers` forks a pool when the `report` command starts, while the process is small: it
computes the edit distances (each worker a part of the pairs) and reads the score columns while the
command reads the pairs, then draws the figures while it writes the tables. Its workers may query
the database only if no connection was open when they were forked (each then opens its own, and
closes it after each job): a connection is never shared across a fork. On the command's path none
is open; under a test's transaction one is, and the distances and columns are computed and read in
the command's process, as without workers.
"""

import ctypes
import gc
import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connections
from threadpoolctl import threadpool_limits

from reports.analysis.common import usable_cpus

_CALLS: list = []  # the parts of the current `run_forked`, read by its children by index


def usable_workers() -> int:
    """Processes this one may fork for parallel work: one per CPU it may use, 0 with one CPU or inside a daemon.

    A Celery prefork worker is a daemon, and a daemon may not start processes.
    """
    if multiprocessing.current_process().daemon or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    cpus = usable_cpus()
    return cpus if cpus > 1 else 0


def one_thread_each():
    """In a forked worker: one BLAS/OpenMP thread. The workers are one per CPU already; with the libraries'
    default (a thread per CPU in each), OpenBLAS's spinning threads outnumber the cores (the 400,000-pair
    report took 38.6 s instead of 28.2 s, docs/operations/performance.md). And freed memory kept."""
    threadpool_limits(1)
    keep_freed_memory()


# glibc's mallopt parameters (malloc.h), and the values a forked worker sets.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
KEPT_FREE_BYTES, MAPPED_FROM_BYTES = 64 * 2**20, 32 * 2**20
_keeping_freed_memory = False  # set by `keep_freed_memory`


def keep_freed_memory() -> bool:
    """In a forked worker: arrays under 32 MiB taken from the heap, and up to 64 MiB of freed heap kept.

    A worker's steps make and drop numpy arrays of a few MB (a column of 400,000 floats is 3 MB). glibc's
    default gives the top of the heap back once it is free, and each new array then faults its pages in again:
    about a second of system CPU in the 400,000-pair report's workers (docs/operations/performance.md). A worker
    is short-lived, so keeping is cheap; set in the workers only, never in the process that forks them (a web
    or test process lives on).
    False where the C library has no `mallopt` (not glibc): nothing is changed there.
    """
    global _keeping_freed_memory
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):
        return False
    _keeping_freed_memory = bool(mallopt(M_MMAP_THRESHOLD, MAPPED_FROM_BYTES)) and bool(
        mallopt(M_TRIM_THRESHOLD, KEPT_FREE_BYTES)
    )
    return _keeping_freed_memory


def keeps_freed_memory() -> bool:
    """Whether `keep_freed_memory` set this process's allocator."""
    return _keeping_freed_memory


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
        with ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=one_thread_each
        ) as pool:
            return list(pool.map(_call, range(len(calls))))
    finally:
        _CALLS = []
        gc.unfreeze()


@dataclass
class ReportWorkers:
    pool: ProcessPoolExecutor
    count: int
    can_query: bool  # no connection was open at the fork: each worker opens its own

    @property
    def step_processes(self) -> int:
        """Processes that compute the analysis's step groups (forked once the frames are read): one more than
        the workers. The groups do not split evenly in two (calibration and classification take about 3 s
        each at 400,000 pairs, the others 0.1-2 s): with two processes one ended a second or more before the
        other. With a third the CPUs are shared to the end: the analysis took 5.3-6.4 s instead of 6.8-7.4 s
        (docs/operations/performance.md); a fourth gained nothing more."""
        return self.count + 1

    def query(self, function, *args) -> Future:
        """`function(*args)` (which reads the database) in a worker, its connection closed afterwards."""
        if not self.can_query:
            raise RuntimeError("these workers were forked with a connection open: they may not query")
        return self.pool.submit(_closing_connections, function, *args)

    def queries(self):
        """Running many queries at once through these workers (`function, [arguments...]` -> results),
        or None where they may not query (the caller then queries itself)."""
        if not self.can_query:
            return None
        return lambda function, arguments: [found.result() for found in [self.query(function, *a) for a in arguments]]


def start_worker():
    """Each worker as it starts: one BLAS thread (`one_thread_each`), and what the figures will need imported
    (a second that the report then saves)."""
    one_thread_each()
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401


def _closing_connections(function, *args):
    try:
        return function(*args)
    finally:
        connections.close_all()


@contextmanager
def report_workers(workers=None):
    """`ReportWorkers` started now (None where no process may be started); `workers`: how many (0: none)."""
    workers = usable_workers() if workers is None else workers
    if not workers:
        yield None
        return
    can_query = not any(connection.connection is not None for connection in connections.all(initialized_only=True))
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=start_worker)
    pool.submit(int)  # with fork, the pool starts all its processes at its first job: now, while this one is small
    try:
        yield ReportWorkers(pool, workers, can_query)
    finally:
        pool.shutdown(cancel_futures=True)
