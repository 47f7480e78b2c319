"""What every app needs from the database layer: riding out a busy SQLite file, and reading many rows fast.

On SQLite one writer holds the file at a time; the busy timeout makes the
others wait, but a wait can still run out under a burst (or a write can meet
a lock SQLite refuses to wait for). A request that fails that way changed
nothing (its transaction rolled back), so running it again is safe.
"""

import logging
import random
import time
from collections.abc import Iterator
from functools import wraps

from django.conf import settings
from django.db import OperationalError, connection

logger = logging.getLogger(__name__)

LOCKED_ATTEMPTS = 5


def is_locked(error):
    return connection.vendor == "sqlite" and "locked" in str(error).lower()


def retry_if_locked(function):
    """Run `function` again (bounded, with jittered back-off) when SQLite reports the database locked.

    Only for functions whose writes are idempotent or all-or-nothing, and only outside
    an enclosing transaction: inside one, the retry belongs to whoever opened it.
    """

    @wraps(function)
    def wrapped(*args, **kwargs):
        for attempt in range(1, LOCKED_ATTEMPTS + 1):
            try:
                return function(*args, **kwargs)
            except OperationalError as error:
                if attempt == LOCKED_ATTEMPTS or not is_locked(error) or connection.in_atomic_block:
                    raise
                logger.warning("%s: database locked, attempt %d of %d", function.__qualname__, attempt, LOCKED_ATTEMPTS)
                time.sleep(random.uniform(0.05, 0.25) * attempt)
        raise AssertionError("unreachable")

    return wrapped


def raw_rows(values_list) -> list[tuple]:
    """The rows of a `values_list` query as the database cursor returns them: no per-row converters.

    For hundreds of thousands of ids, floats and strings the ORM's conversion costs seconds;
    JSON comes back as the driver gives it (text on SQLite), so callers decode what they read.
    """
    return fetch_rows(*values_list.query.sql_with_params())


def fetch_rows(sql, params) -> list[tuple]:
    """The rows of one SQL statement as the cursor returns them (a query compiled once, run many times)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def raw_row_chunks(values_list, size=50_000) -> Iterator[list[tuple]]:
    """`raw_rows` a chunk at a time: the rows of a large table are never all held as tuples at once."""
    sql, params = values_list.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while chunk := cursor.fetchmany(size):
            yield chunk


def forget_logged_queries():
    """Empty DEBUG's query log between the batches of a long import or scoring run.

    With DEBUG on, Django keeps the last 9,000 statements: a 400k-pair import's bulk
    INSERTs held about 250 MiB there. Left alone while something captures queries
    on purpose (a test counting them sets `force_debug_cursor`).
    """
    if settings.DEBUG and not connection.force_debug_cursor:
        connection.queries_log.clear()
