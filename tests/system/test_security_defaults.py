"""Safe defaults: production refuses unsafe settings by name, DEBUG is opt-in, the demo account stays out."""

import os
import subprocess
import sys

import pytest
import requests
from django.db import connection

from tests import servers

REPO = servers.REPO
STRONG_KEY = "Zq8#vL2!pW9-" * 5

# The environment docs/security.md documents for production (behind one TLS proxy).
PRODUCTION_ENV = {
    "DJANGO_SECRET_KEY": STRONG_KEY,
    "DJANGO_ALLOWED_HOSTS": "parasol.example.org",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://parasol.example.org",
    "PARASOL_TRUSTED_PROXIES": "1",
}


def run_manage(*args, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PARASOL_"))}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=environment, capture_output=True, text=True, timeout=120
    )


def shell_says(code, **env):
    """The last line a Python snippet prints inside `manage.py shell` (Django 5.2 prints an import note first)."""
    result = run_manage("shell", "-c", code, **env)
    lines = result.stdout.strip().splitlines()
    return lines[-1] if lines else result.stderr


def test_the_documented_production_environment_passes_check_deploy():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_debug_is_off_unless_asked_for():
    assert shell_says("from django.conf import settings; print(settings.DEBUG)", **PRODUCTION_ENV) == "False"


@pytest.mark.parametrize(
    "key, message",
    [
        (None, "DJANGO_SECRET_KEY must be set"),
        ("", "DJANGO_SECRET_KEY must be set"),
        ("build", "DJANGO_SECRET_KEY is too weak"),
        ("django-insecure-" + "abcdefghij" * 5, "DJANGO_SECRET_KEY is too weak"),
        ("a" * 80, "DJANGO_SECRET_KEY is too weak"),
        ("parasol-local-development-key-not-for-production", "DJANGO_SECRET_KEY is too weak"),
    ],
)
def test_production_refuses_to_start_with_a_weak_or_missing_key(key, message):
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DJANGO_SECRET_KEY"}
    if key is not None:
        env["DJANGO_SECRET_KEY"] = key
    result = run_manage("check", **env)
    assert result.returncode != 0 and message in result.stderr


@pytest.mark.parametrize(
    "variable, value",
    [("DJANGO_HSTS_SECONDS", "0"), ("DJANGO_SSL_REDIRECT", "false"), ("DJANGO_SECURE_COOKIES", "false")],
)
def test_check_deploy_names_a_weakened_production_setting(variable, value):
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV, **{variable: value})
    assert result.returncode != 0 and "security." in result.stderr


def test_the_demo_account_is_refused_in_production(tmp_path):
    db = {"SQLITE_PATH": str(tmp_path / "prod.sqlite3")}
    assert run_manage("migrate", "--noinput", **PRODUCTION_ENV, **db).returncode == 0
    refused = run_manage("load_demo", **PRODUCTION_ENV, **db)
    assert refused.returncode != 0 and "refusing to create the demo account" in refused.stderr
    weak = run_manage("load_demo", "--allow-production", **PRODUCTION_ENV, **db, PARASOL_DEMO_PASSWORD="parasol1")
    assert weak.returncode != 0 and "PARASOL_DEMO_PASSWORD is not acceptable" in weak.stderr
    count = "from django.contrib.auth.models import User; print(User.objects.count())"
    assert shell_says(count, **PRODUCTION_ENV, **db) == "0"
    allowed = run_manage(
        "load_demo", "--allow-production", **PRODUCTION_ENV, **db, PARASOL_DEMO_PASSWORD="Kx9!vq2#Lm7@pz"
    )
    assert allowed.returncode == 0, allowed.stderr
    flags = "from django.contrib.auth.models import User; u = User.objects.get(); print(u.is_staff, u.is_superuser)"
    assert shell_says(flags, **PRODUCTION_ENV, **db) == "True False"


def test_the_demo_account_is_staff_not_superuser_in_development(tmp_path):
    db = {"SQLITE_PATH": str(tmp_path / "dev.sqlite3"), "DJANGO_DEBUG": "true"}
    assert run_manage("migrate", "--noinput", **db).returncode == 0
    assert run_manage("load_demo", **db).returncode == 0
    flags = "from django.contrib.auth.models import User; u = User.objects.get(); print(u.is_staff, u.is_superuser)"
    assert shell_says(flags, **db) == "True False"


@pytest.fixture
def production_server(db):
    """gunicorn with production settings (plain HTTP on 127.0.0.1: no redirect to HTTPS)."""
    with servers.production_gunicorn(connection, DJANGO_SECRET_KEY=STRONG_KEY) as url:
        yield url


@pytest.mark.django_db(transaction=True)
def test_a_production_error_page_shows_no_traceback_or_url_map(production_server):
    for path in ("/no-such-page/", "/j/no-such-campaign/", "/api/campaigns/x/", "/admin/nothing/"):
        response = requests.get(f"{production_server}{path}", allow_redirects=False, timeout=60)
        assert response.status_code in (302, 401, 403, 404), path
        for leak in ("URLconf", "Traceback", "DEBUG = True", "parasol.urls"):
            assert leak not in response.text, (path, leak)
