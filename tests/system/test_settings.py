"""Settings read from the environment: production checks, and loud failures on bad values."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_manage(*args, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PARASOL_"))}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=environment, capture_output=True, text=True, timeout=60
    )


def test_the_production_settings_pass_check_deploy():
    result = run_manage("check", "--deploy", DJANGO_DEBUG="false", DJANGO_SECRET_KEY="k" * 20 + "-Zq8#vL2!pW9" * 4)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    result = run_manage("check", DJANGO_DEBUG="false")
    assert result.returncode != 0 and "DJANGO_SECRET_KEY must be set" in result.stderr


@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("PARASOL_IMPORT_MAX_ROWS", "many", "PARASOL_IMPORT_MAX_ROWS must be an integer"),
        ("DJANGO_DEBUG", "perhaps", "DJANGO_DEBUG must be a boolean"),
        ("PARASOL_METRICS", "lev,rouge", "PARASOL_METRICS names unknown metrics: rouge"),
        ("GENERATION_MODELS", "/models/mistral", "GENERATION_MODELS must be name=value items"),
        ("GENERATION_MODELS", "embedded=/tmp/x.gguf", "GENERATION_MODELS names 'embedded' twice or redefines"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(variable, value, message):
    result = run_manage("check", **{variable: value})
    assert result.returncode != 0 and message in result.stderr
