"""A settings problem stops manage.py, a Celery worker and gunicorn with one line naming the variable."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# The environment of a fresh shell in the clone: nothing of Django's or Parasol's set.
FRESH = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PARASOL_", "CELERY_"))}


def run(command, **env):
    return subprocess.run(
        command, cwd=REPO, env=FRESH | env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


COMMANDS = {
    "manage.py": lambda tmp: [sys.executable, "manage.py", "check"],
    "celery": lambda tmp: [str(BIN / "celery"), "-A", "parasol", "worker", "-l", "warning"],
    "gunicorn": lambda tmp: [
        str(BIN / "gunicorn"),
        "--bind",
        "127.0.0.1:0",
        "--control-socket",
        str(tmp / "gunicorn.ctl"),
        "parasol.wsgi:application",
    ],
}


def message_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("Parasol cannot start:")]


@pytest.mark.parametrize("program", COMMANDS)
def test_it_says_in_one_line_to_set_djangos_debug_for_a_local_run(program, tmp_path):
    result = run(COMMANDS[program](tmp_path))

    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    [line] = message_lines(result.stderr)
    assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is false" in line
    assert "for a local run set DJANGO_DEBUG=true" in line


@pytest.mark.parametrize("program", COMMANDS)
def test_it_names_a_malformed_variable_in_one_line(program, tmp_path):
    result = run(COMMANDS[program](tmp_path), DJANGO_DEBUG="true", PARASOL_IMPORT_MAX_ROWS="many")

    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert message_lines(result.stderr) == [
        "Parasol cannot start: PARASOL_IMPORT_MAX_ROWS must be an integer, got 'many'"
    ]
