"""Worker processes for the `report` command: they read score columns while it reads the pairs,
then draw the figures while it writes the tables.

They are forked when the command starts, while the process is small, and on a machine with
one CPU, or inside a daemon (a Celery worker), there are none. They may query the database
only if no connection was open when they were forked (each then opens its own, and closes
it after each job): a connection is never shared across a fork. On the command's path none
is open; under a test's transaction one is, and the columns are read here, as without workers.
"""

import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connections

from reports.analysis.parallel import usable_workers


@dataclass
class ReportWorkers:
    pool: ProcessPoolExecutor
    count: int
    can_query: bool  # no connection was open at the fork: each worker opens its own

    def query(self, function, *args) -> Future:
        """`function(*args)` (which reads the database) in a worker, its connection closed afterwards."""
        if not self.can_query:
            raise RuntimeError("these workers were forked with a connection open: they may not query")
        return self.pool.submit(_closing_connections, function, *args)


def import_matplotlib():
    """What the figures will need, imported by each worker as it starts (a second that the report then saves)."""
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
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=import_matplotlib)
    pool.submit(int)  # with fork, the pool starts all its processes at its first job: now, while this one is small
    try:
        yield ReportWorkers(pool, workers, can_query)
    finally:
        pool.shutdown(cancel_futures=True)
