"""Guessing passwords and API tokens against the live server is slowed down, and weak passwords are refused."""

import secrets

import pytest
import requests
from django.contrib.auth import get_user_model
from rest_framework.throttling import SimpleRateThrottle

from tests.system.conftest import post_form

pytestmark = pytest.mark.django_db(transaction=True)


def try_login(base, username, password):
    return post_form(requests.Session(), f"{base}/accounts/login/", {"username": username, "password": password})


def test_wrong_passwords_lock_the_login_even_for_the_right_one(live_server, researcher, settings):
    statuses = [try_login(live_server.url, "researcher", f"guess-{i}").status_code for i in range(60)]
    assert statuses[: settings.AXES_FAILURE_LIMIT - 1] == [200] * (settings.AXES_FAILURE_LIMIT - 1)
    assert set(statuses[settings.AXES_FAILURE_LIMIT :]) == {429}
    refused = try_login(live_server.url, "researcher", "pw-researcher-123")
    assert refused.status_code == 429 and "sessionid" not in refused.cookies


def test_a_lockout_for_one_account_leaves_another_alone(live_server, researcher, outsider):
    for i in range(10):
        try_login(live_server.url, "researcher", f"guess-{i}")
    assert try_login(live_server.url, "outsider", "pw-outsider-123").status_code == 302


def test_random_api_tokens_are_cut_off_after_a_few(live_server, researcher, settings, api_of):
    url = f"{live_server.url}/api/campaigns/"
    statuses = [
        requests.get(url, headers={"Authorization": f"Token {secrets.token_hex(20)}"}).status_code for _ in range(100)
    ]
    allowed = settings.PARASOL_API_TOKEN_FAILURES
    assert statuses[:allowed] == [401] * allowed
    assert set(statuses[allowed:]) == {429}
    # From that address even a real key now waits: guessing cannot be interleaved with real use.
    assert api_of(researcher).get(url).status_code == 429


def test_the_api_throttles_a_flood_from_one_user(live_server, researcher, api_of, monkeypatch):
    # DRF reads the rates once, into the throttle class; a small rate keeps the test short.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "5/minute", "user": "10/minute"})
    api = api_of(researcher)
    statuses = [api.get(f"{live_server.url}/api/campaigns/").status_code for _ in range(15)]
    assert statuses[:10] == [200] * 10 and set(statuses[10:]) == {429}


@pytest.mark.parametrize("weak", ["password", "12345678", "researcher1", "83920174651"])
def test_weak_passwords_are_refused_when_an_admin_sets_them(live_server, browser_of, weak):
    admin = get_user_model().objects.create_superuser("boss", password="pw-boss-123")
    response = post_form(
        browser_of(admin),
        f"{live_server.url}/admin/auth/user/add/",
        {"username": "researcher1", "password1": weak, "password2": weak, "usable_password": "true"},
    )
    assert response.status_code == 200 and "errorlist" in response.text
    assert not get_user_model().objects.filter(username="researcher1").exists()
