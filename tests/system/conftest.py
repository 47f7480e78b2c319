"""Clients for attacks against the live server: a logged-in browser-like session and an API client."""

import re

import pytest
import requests
from rest_framework.authtoken.models import Token


def csrf_token(session, url):
    page = session.get(url)
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    return match.group(1) if match else session.cookies.get("csrftoken")


def post_form(session, url, data, files=None):
    """POST a page's form as a browser would: CSRF token from the page, Referer set."""
    token = csrf_token(session, url)
    return session.post(
        url, data | {"csrfmiddlewaretoken": token}, files=files, headers={"Referer": url}, allow_redirects=False
    )


def log_in(base, username, password):
    session = requests.Session()
    response = post_form(session, f"{base}/accounts/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.text[:500]
    return session


@pytest.fixture
def browser_of(live_server):
    """A logged-in session for a user whose password is pw-<username>-123 (as the shared fixtures make them)."""
    return lambda user: log_in(live_server.url, user.username, f"pw-{user.username}-123")


@pytest.fixture
def api_of(live_server):
    """A requests session authenticated with the user's API token."""

    def make(user):
        session = requests.Session()
        session.headers["Authorization"] = f"Token {Token.objects.get_or_create(user=user)[0].key}"
        return session

    return make


@pytest.fixture
def gunicorn(transactional_db):
    """gunicorn with production settings on the test database (SQLite, or PostgreSQL under tests.pgserver)."""
    from django.db import connection

    from tests import servers

    with servers.production_gunicorn(connection) as url:
        yield url


def production_login(user, settings, base):
    """A session logged in on a production server: the password hashed as production checks it (not MD5)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user.set_password(f"pw-{user.username}-123")
    user.save()
    return log_in(base, user.username, f"pw-{user.username}-123")
