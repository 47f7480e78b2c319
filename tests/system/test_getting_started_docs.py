"""The getting-started pages and the README, run as written: each shell block in a fresh shell, on a scratch database.

A block that starts servers or must not run here is marked just above its fence with
``<!-- docs-test: skip: REASON -->``; those are reported as skipped with their reason.
Every other ``sh`` block runs, page after page in reading order, in a scratch copy of the
clone (the project's files linked, so what a block writes stays there) after what
`make demo` leaves behind: a migrated database with the demo loaded.
"""

import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.servers import free_port

pytestmark = pytest.mark.docs

REPO = Path(__file__).resolve().parents[2]
# Reading order: the demo and the command line, a first campaign, its report; then the README.
PAGES = [
    "docs/getting-started/index.md",
    "docs/getting-started/first-campaign.md",
    "docs/getting-started/first-report.md",
    "README.md",
]
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
SKIP_MARKER = re.compile(r"<!--\s*docs-test:\s*skip:\s*(?P<reason>.*?)\s*-->", re.S)
# Paths of a clone the scratch copy must not share: its own database, caches and outputs.
NOT_LINKED = {".git", "db.sqlite3", "db.sqlite3-wal", "db.sqlite3-shm", "var", "site"}


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    skip_reason: str | None

    def __str__(self):
        return f"{self.page}:{self.line}"


def page_blocks(page):
    """Every fenced and indented code block of a page, with the skip marker just above it (or just below it,
    for the README's opening commands, which stay its first lines), if any."""
    tokens = MarkdownIt("commonmark").parse((REPO / page).read_text())
    blocks = []
    for index, token in enumerate(tokens):
        if token.type not in ("fence", "code_block"):
            continue
        near = [tokens[i] for i in (index - 1, index + 1) if 0 <= i < len(tokens)]
        markers = [SKIP_MARKER.search(t.content) for t in near if t.type == "html_block"]
        marker = next((found for found in markers if found), None)
        language = token.info.split()[0] if token.info.strip() else ""
        blocks.append(Block(page, token.map[0] + 1, language, token.content, marker and marker["reason"]))
    return blocks


ALL_BLOCKS = [block for page in PAGES for block in page_blocks(page)]
SKIPPED = [block for block in ALL_BLOCKS if block.skip_reason is not None]


def test_every_code_block_says_its_language_and_every_skip_gives_a_reason():
    # An indented block or an unlabelled fence would escape the run below (unless it is marked not to run).
    unlabelled = [str(block) for block in ALL_BLOCKS if not block.language and block.skip_reason is None]
    assert unlabelled == [], "label these code blocks (```sh for commands, ```text for anything else)"
    assert all(block.skip_reason.strip() for block in SKIPPED)
    assert [b for b in ALL_BLOCKS if b.language in SHELL_LANGUAGES and b.skip_reason is None], "nothing would run"


@pytest.mark.parametrize("block", SKIPPED, ids=str)
def test_a_block_marked_not_to_run(block):
    pytest.skip(f"{block} not run: {block.skip_reason}")


@pytest.fixture
def clone(tmp_path):
    """A scratch copy of the clone: its files linked, so what a command writes stays here."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in NOT_LINKED:
            (clone / entry.name).symlink_to(entry)
    return clone


@pytest.fixture
def scratch_clone(clone, tmp_path):
    """The scratch copy with a fresh database, as `make demo` leaves it: migrated, the demo loaded."""
    fresh_shell = fresh_environment(tmp_path)
    demo = fresh_shell | {"DJANGO_DEBUG": "true"}
    for command in (["migrate", "--noinput"], ["load_demo"]):
        result = subprocess.run(
            [sys.executable, "manage.py", *command], cwd=clone, env=demo, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stderr
    return clone, fresh_shell


def fresh_environment(tmp_path):
    """A new login shell's environment: no virtualenv on PATH, nothing of Django's, Celery's or Parasol's set.

    Only where the scratch copy keeps its state is set (settings.py places it under the real
    clone otherwise), a broker that is not there and no scoring on import: the pages promise
    the import and the report, not the background scoring, which needs the workers.
    """
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)
    kept = {name: os.environ[name] for name in ("HOME", "LANG", "TMPDIR") if name in os.environ}
    return kept | {
        "PATH": path,
        "OMP_NUM_THREADS": "1",
        "SQLITE_PATH": str(tmp_path / "scratch.sqlite3"),
        "PARASOL_CACHE_DIR": str(tmp_path / "cache"),
        "PARASOL_PEM_MODEL_DIR": str(tmp_path / "pem"),
        "PARASOL_BEAT_SCHEDULE": str(tmp_path / "celerybeat-schedule"),
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "PARASOL_SCORE_ON_CREATE": "false",
    }


def test_the_shell_blocks_run_as_written_in_a_fresh_shell(scratch_clone):
    clone, environment = scratch_clone
    runnable = [b for b in ALL_BLOCKS if b.language in SHELL_LANGUAGES and b.skip_reason is None]
    for block in runnable:
        result = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.code],
            cwd=clone,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, f"{block} failed:\n{block.code}\n{result.stdout}\n{result.stderr}"
        assert "Traceback" not in result.stderr, f"{block}:\n{result.stderr}"
    skipped = ", ".join(f"{block} ({block.skip_reason})" for block in SKIPPED)
    print(f"ran {len(runnable)} shell blocks; not run: {skipped}")
    # What the pages say the commands leave behind.
    assert (clone / "report").is_dir() and any((clone / "report").iterdir())
    assert (clone / "study-report").is_dir() and any((clone / "study-report").iterdir())
    assert owners_and_names(environment["SQLITE_PATH"], ["my-study", "study"]) == [
        ("my-study", "My first study", "researcher"),
        ("study", "A study", "researcher"),
    ]


def owners_and_names(database, slugs):
    query = (
        "SELECT c.slug, c.name, u.username FROM campaigns_campaign c JOIN auth_user u ON u.id = c.created_by_id "
        f"WHERE c.slug IN ({', '.join('?' * len(slugs))}) ORDER BY c.slug"
    )
    with closing(sqlite3.connect(database)) as connection:
        return connection.execute(query, slugs).fetchall()


def test_a_documented_command_stops_in_one_line_without_the_local_setting(clone, tmp_path):
    result = subprocess.run(
        ["bash", "-c", ". .venv/bin/activate && python manage.py check"],
        cwd=clone,
        env=fresh_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "Parasol cannot start: DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is false: for a local run set "
        "DJANGO_DEBUG=true (a development key stands in); in production set DJANGO_SECRET_KEY to 50+ random characters"
    ]
