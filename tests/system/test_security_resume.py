"""A resume link is adopted only by the adopt POST, whatever the method (live server; issue 25).

The judge cookie is set by two requests only, both POSTs: joining a campaign and adopting
a judge after the confirmation page. Every other method on every token URL (HEAD,
OPTIONS, GET, PUT, PATCH, DELETE, POST) neither sets nor changes it.
"""

import pytest
import requests

from tests.factories import add_pairs, make_judge
from tests.system.conftest import post_form

pytestmark = pytest.mark.django_db(transaction=True)

METHODS = ["HEAD", "OPTIONS", "GET", "PUT", "PATCH", "DELETE", "POST"]
STEPS = ["", "level/", "guidelines/", "answer/", "questions/", "thanks/"]


def cookie_name(campaign):
    return f"parasol_judge_{campaign.pk}"


@pytest.fixture
def victim(campaign):
    add_pairs(campaign, 3)
    return make_judge(campaign)


def sent_cookies(response):
    """The judge cookies a response sets, redirects included."""
    return [
        header
        for step in [*response.history, response]
        for header in step.raw.headers.getlist("Set-Cookie")
        if header.startswith("parasol_judge_")
    ]


def fresh_session(base):
    """A browser with a CSRF cookie and no judge (the welcome page hands out the CSRF token)."""
    session = requests.Session()
    session.get(f"{base}/j/demo/")
    return session


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("step", STEPS)
def test_no_method_on_a_token_url_adopts_the_judge(live_server, victim, method, step):
    session = fresh_session(live_server.url)
    url = f"{live_server.url}/j/demo/{victim.token}/{step}"
    data = {"csrfmiddlewaretoken": session.cookies["csrftoken"], "english_level": "native", "consent": "yes"}
    response = session.request(method, url, data=data, headers={"Referer": url}, allow_redirects=True)
    assert response.status_code < 500
    assert sent_cookies(response) == [], (method, step)
    assert cookie_name(victim.campaign) not in session.cookies
    # Nor does this browser work as that judge afterwards.
    after = session.get(f"{live_server.url}/j/demo/me/", allow_redirects=False)
    assert after.status_code == 404


@pytest.mark.parametrize("method", METHODS)
def test_no_method_on_someone_elses_token_url_changes_a_judges_cookie(live_server, campaign, victim, method):
    session = fresh_session(live_server.url)
    joined = post_form(session, f"{live_server.url}/j/demo/", {"consent": "yes"})
    assert joined.status_code == 302 and sent_cookies(joined)
    mine = session.cookies[cookie_name(campaign)]
    for step in STEPS:
        url = f"{live_server.url}/j/demo/{victim.token}/{step}"
        data = {"csrfmiddlewaretoken": session.cookies["csrftoken"]}
        response = session.request(method, url, data=data, headers={"Referer": url}, allow_redirects=True)
        assert sent_cookies(response) == [], (method, step)
        assert session.cookies[cookie_name(campaign)] == mine


@pytest.mark.parametrize("method", [m for m in METHODS if m != "POST"])
def test_the_adopt_url_takes_nothing_but_a_post(live_server, victim, method):
    session = fresh_session(live_server.url)
    url = f"{live_server.url}/j/demo/{victim.token}/resume/"
    response = session.request(method, url, data={"csrfmiddlewaretoken": session.cookies["csrftoken"]})
    assert response.status_code in (403, 405) and sent_cookies(response) == []  # CSRF or method refused


def test_the_adopt_post_alone_sets_it_and_nothing_after_refreshes_it(live_server, victim):
    session = fresh_session(live_server.url)
    page = session.get(f"{live_server.url}/j/demo/{victim.token}/")
    assert f"/j/demo/{victim.token}/resume/" in page.text  # the confirmation page, not the judge's pair
    adopted = post_form(session, f"{live_server.url}/j/demo/{victim.token}/resume/", {})
    assert adopted.status_code == 302 and sent_cookies(adopted)
    assert session.cookies[cookie_name(victim.campaign)] == victim.token
    for method in ("GET", "HEAD", "OPTIONS", "PUT"):
        for path in ("/j/demo/", "/j/demo/me/", f"/j/demo/{victim.token}/"):
            response = session.request(method, f"{live_server.url}{path}")
            assert response.status_code < 500 and sent_cookies(response) == [], (method, path)


@pytest.mark.parametrize("method", ["HEAD", "OPTIONS"])
def test_through_gunicorn_head_and_options_on_a_resume_link_adopt_nobody(gunicorn, victim, method):
    """The reported request, against gunicorn with production settings: no cookie, and GET then asks first."""
    session = fresh_session(gunicorn)
    response = session.request(method, f"{gunicorn}/j/demo/{victim.token}/", allow_redirects=False)
    assert response.status_code < 500 and not sent_cookies(response)
    assert cookie_name(victim.campaign) not in session.cookies
    page = session.get(f"{gunicorn}/j/demo/{victim.token}/")
    assert page.status_code == 200 and "/resume/" in page.text, "GET must still ask before adopting"
    assert not sent_cookies(page)
