"""The `report` command's worker processes: they read the score columns, compute the edit distances and draw the
figures, and what the command writes is the same, byte for byte, as without them.

Run on a database file in child processes, as a researcher runs the command: the workers
may query only when no connection was open when they were forked, which a test's own
transaction never allows (`reports.machinery.workers`).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reports.machinery.workers import usable_workers
from tests import servers

# The command, with each metric column and each part of the edit distances read by the workers recorded (the
# process that read it).
SPIED_REPORT = """
import os, sys, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
django.setup()
import reports.frames as frames
read = frames.read_column
def spy(span, group, newer_than=0):
    with open(sys.argv[1], "a") as log:
        log.write(f"{os.getpid()} {group['metric']}\\n")
    return read(span, group, newer_than)
frames.read_column = spy
distances = frames.read_edit_distances
def spy_distances(span):
    with open(sys.argv[1], "a") as log:
        log.write(f"{os.getpid()} edit_distance\\n")
    return distances(span)
frames.read_edit_distances = spy_distances
from django.core.management import call_command
call_command("report", "demo", "--label-source", "gold", "--out", sys.argv[2])
print(os.getpid())
"""


@pytest.fixture(scope="module")
def scored_demo(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workers")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PARASOL_", "CELERY_", "DATABASE_"))}
    env.update(
        SQLITE_PATH=str(folder / "db.sqlite3"),
        DJANGO_DEBUG="true",
        PARASOL_CACHE_DIR=str(folder / "cache"),
        PARASOL_SCORE_ON_CREATE="false",
    )
    for command in (["migrate", "-v", "0"], ["load_demo"], ["score", "demo", "--metrics", "lev", "bleu", "--inline"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=servers.REPO, env=env, check=True)
    return folder, env


def written(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_the_workers_read_the_scores_and_the_files_are_those_of_a_single_process(scored_demo):
    folder, env = scored_demo
    log = folder / "columns.log"
    spied = subprocess.run(
        [sys.executable, "-c", SPIED_REPORT, str(log), str(folder / "with")],
        cwd=servers.REPO, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    command_pid = spied.stdout.strip().splitlines()[-1]
    readers = [line.split() for line in log.read_text().splitlines()]
    # The edit distances in one part per worker (one per CPU this process may use), then the columns.
    assert sorted(metric for _pid, metric in readers if metric != "edit_distance") == ["bleu", "lev"]
    assert [metric for _pid, metric in readers].count("edit_distance") == usable_workers()
    assert command_pid not in {pid for pid, _metric in readers}, "the columns were read by the command itself"
    # One CPU: no worker at all (`usable_workers`), everything in the command's process.
    subprocess.run(
        ["taskset", "-c", "0", sys.executable, "manage.py", "report", "demo", "--label-source", "gold",
         "--out", str(folder / "alone")],
        cwd=servers.REPO, env=env, check=True, capture_output=True,
    )  # fmt: skip
    with_workers, alone = written(folder / "with"), written(folder / "alone")
    assert with_workers.keys() == alone.keys() and any(name.endswith(".png") for name in alone)
    assert with_workers == alone
