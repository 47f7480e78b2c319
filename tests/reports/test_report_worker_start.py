"""What a process that computes reports does as it starts: a Celery worker on the reports queue imports the
analysis's libraries before its first report, and the report command's forked workers use one BLAS thread each."""

import json
import os
import platform
import subprocess
import sys
from functools import partial

from threadpoolctl import threadpool_info, threadpool_limits

from reports.machinery.workers import keeps_freed_memory, report_workers, run_forked
from tests import servers

# A worker set up as `celery -A parasol worker -Q <queues>` sets one up (nothing is consumed: no broker is
# reached before `start`), then the modules it has imported.
WORKER = """
import json, os, sys, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
django.setup()
from celery.worker import WorkController
from parasol.celery import app
WorkController(app=app, queues=sys.argv[1].split(","), pool_cls="solo", hostname="start-test")
print(json.dumps({name: name in sys.modules for name in ("ppi_py", "crowdkit.aggregation", "scipy.stats")}))
"""


def loaded_by_a_worker_on(queues):
    env = dict(os.environ, DJANGO_DEBUG="true")
    done = subprocess.run(
        [sys.executable, "-c", WORKER, queues], cwd=servers.REPO, env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_worker_on_the_reports_queue_imports_the_analysis_libraries_as_it_starts():
    loaded = loaded_by_a_worker_on("reports,training")
    assert loaded == {"ppi_py": True, "crowdkit.aggregation": True, "scipy.stats": True}


def test_a_worker_that_computes_no_report_does_not_pay_for_them():
    assert loaded_by_a_worker_on("cpu")["ppi_py"] is False


def blas_threads():
    import numpy  # noqa: F401 - its BLAS is what threadpoolctl reports

    return [library["num_threads"] for library in threadpool_info()]


def test_forked_report_workers_use_one_blas_thread_each():
    """Two workers on two CPUs with a BLAS thread per CPU each oversubscribe the cores (OpenBLAS spins).
    The parent runs two here (as without OMP_NUM_THREADS=1, which the suite sets): a fork inherits that."""
    with threadpool_limits(2):
        assert set(blas_threads()) == {2}
        for threads in run_forked([partial(blas_threads), partial(blas_threads)], workers=2):
            assert threads and set(threads) == {1}
        with report_workers(workers=2) as workers:
            assert set(workers.pool.submit(blas_threads).result()) == {1}


def test_forked_report_workers_keep_the_memory_they_free_where_the_c_library_is_glibc():
    """`keep_freed_memory`, set as each forked worker starts (glibc's mallopt: a second of system CPU in the
    400,000-pair report); never in the process that forks them, which lives on."""
    glibc = platform.libc_ver()[0] == "glibc"
    for kept in run_forked([partial(keeps_freed_memory), partial(keeps_freed_memory)], workers=2):
        assert kept is glibc
    with report_workers(workers=2) as workers:
        assert workers.pool.submit(keeps_freed_memory).result() is glibc
    assert keeps_freed_memory() is False
