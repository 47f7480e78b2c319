"""Settings read from the environment: production checks, and loud failures on bad values."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HELPERS = {"env_str", "env_bool", "env_int", "env_list", "env_mapping"}
# Settings whose names a library looks up (Django's own are found in global_settings).
LIBRARY_PREFIXES = ("AXES_", "CELERY_", "REST_FRAMEWORK", "SPECTACULAR_")


def run_manage(*args, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PARASOL_"))}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=environment, capture_output=True, text=True, timeout=300
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
        ("BERTSCORE_NUM_LAYERS", "nine", "BERTSCORE_NUM_LAYERS must be an integer"),
        ("BERTSCORE_NUM_LAYERS", "0", "BERTSCORE_NUM_LAYERS must be at least 1"),
    ],
)
def test_a_bad_value_stops_start_up_naming_the_variable(variable, value, message):
    result = run_manage("check", **{"DJANGO_DEBUG": "true", variable: value})
    assert result.returncode != 0 and message in result.stderr


SHOW_SQLITE = (
    "from django.db import connection; c = connection.cursor(); "
    "print(c.execute('PRAGMA journal_mode').fetchone()[0], c.execute('PRAGMA synchronous').fetchone()[0], "
    "c.execute('PRAGMA busy_timeout').fetchone()[0], connection.transaction_mode)"
)


@pytest.mark.parametrize("how", ["default", "url"])
def test_sqlite_gets_wal_a_busy_timeout_and_immediate_writes_however_it_is_configured(how, tmp_path):
    path = tmp_path / "parasol.sqlite3"
    env = {"SQLITE_PATH": str(path)} if how == "default" else {"DATABASE_URL": f"sqlite:///{path}"}
    result = run_manage("shell", "-c", SHOW_SQLITE, DJANGO_DEBUG="true", **env)
    assert result.returncode == 0, result.stderr
    # synchronous=1 is NORMAL; the busy timeout is in milliseconds.
    assert result.stdout.splitlines()[-1].split() == ["wal", "1", "30000", "IMMEDIATE"]
    assert path.exists()


def test_an_sqlite_url_must_name_a_file():
    result = run_manage("check", DJANGO_DEBUG="true", DATABASE_URL="sqlite://:memory:")
    assert result.returncode != 0 and "DATABASE_URL must name an SQLite file" in result.stderr


SHOW_METRICS = "from django.conf import settings; print(','.join(settings.PARASOL_METRICS))"


@pytest.mark.parametrize(
    "env, expected",
    [
        (
            {},
            "lev,bleu,meteor,wer,bertscore,parascore,sbert,parapluie_direct,parapluie_indirect,"
            "parapluie_fs_direct,ngram_f1,lm_fluency",
        ),
        ({"PARASOL_METRICS": "lev,pem"}, "lev,pem"),
    ],
)
def test_parasol_metrics_defaults_to_the_registrys_metrics_but_the_opt_in_ones(env, expected):
    result = run_manage("shell", "-c", SHOW_METRICS, DJANGO_DEBUG="true", **env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == expected


def variables_read(node):
    return [
        call.args[0].value
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in HELPERS
    ]


def module_settings(tree):
    """(name, variables its value reads) for every upper-case name the settings module assigns outside functions."""
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
    inside = {id(node) for function in functions for node in ast.walk(function)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and id(node) not in inside:
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.isupper():
                    yield target.id, variables_read(node.value)


def test_each_setting_is_named_like_the_variable_it_reads_unless_a_library_owns_the_name():
    from django.conf import global_settings

    found = dict(module_settings(ast.parse((REPO / "parasol" / "settings.py").read_text(encoding="utf-8"))))
    assert found["PARASOL_IMPORT_MAX_ROWS"] == ["PARASOL_IMPORT_MAX_ROWS"]
    assert found["AXES_FAILURE_LIMIT"] == ["PARASOL_LOGIN_FAILURE_LIMIT"]
    misnamed = {
        name: variables
        for name, variables in found.items()
        if not (hasattr(global_settings, name) or name.startswith(LIBRARY_PREFIXES))
        # Our own: read from the variable of its name, or derived and then not named like a variable.
        and variables != [name]
        and (variables or name.startswith("PARASOL_"))
    }
    assert misnamed == {}
