"""Smaller holes and hardening, replayed against the live server (and gunicorn where settings matter)."""

import csv
import io
import re

import pytest
import requests
from django.db import connection

from annotation.models import Judgment
from campaigns.models import Pair
from tests import servers
from tests.factories import add_pairs, make_judge, without_controls
from tests.system.conftest import post_form

pytestmark = pytest.mark.django_db(transaction=True)


def judge_session(base, judge):
    session = requests.Session()
    session.cookies.set(f"parasol_judge_{judge.campaign_id}", judge.token)
    session.get(f"{base}/j/{judge.campaign.slug}/{judge.token}/")  # the csrftoken cookie
    return session


def answer(session, base, judge, response_ms=None):
    page = session.get(f"{base}/j/{judge.campaign.slug}/{judge.token}/", allow_redirects=False)
    assignment = re.search(r'name="assignment" value="(\d+)"', page.text).group(1)
    url = f"{base}/j/{judge.campaign.slug}/{judge.token}/answer/"
    data = {"assignment": assignment, "answer": "same_meaning", "csrfmiddlewaretoken": session.cookies["csrftoken"]}
    if response_ms is not None:
        data["response_ms"] = response_ms
    return session.post(url, data, headers={"Referer": url}, allow_redirects=False)


def test_a_judge_cannot_claim_to_have_read_longer_than_the_server_saw(live_server, campaign):
    add_pairs(campaign, 2)
    judge = make_judge(campaign)
    session = judge_session(live_server.url, judge)
    response = answer(session, live_server.url, judge, response_ms=3_600_000)  # "an hour", right after display
    assert response.status_code == 200  # a training answer: its feedback page
    stored = Judgment.objects.get(judge=judge).response_ms
    assert stored is not None and stored < 3_600_000


def test_an_answer_flood_is_refused(live_server, campaign, settings):
    settings.PARASOL_MAX_ANSWERS_PER_MINUTE = 3
    add_pairs(campaign, 5)
    judge = make_judge(campaign)
    session = judge_session(live_server.url, judge)
    statuses = [answer(session, live_server.url, judge).status_code for _ in range(5)]
    assert statuses == [200, 200, 200, 429, 429]  # training answers get their feedback page
    assert Judgment.objects.filter(judge=judge).count() == 3


@pytest.mark.parametrize("path", ["/j/demo/", "/accounts/login/", "/admin/login/", "/campaigns/demo/edit/"])
def test_a_big_anonymous_body_is_refused_before_it_is_read(live_server, campaign, path):
    body = b"x" * (2 * 1024 * 1024)
    response = requests.post(
        f"{live_server.url}{path}", files={"file": ("big.bin", body)}, allow_redirects=False, timeout=60
    )
    assert response.status_code == 413 and "too large" in response.text


def test_an_upload_url_still_takes_a_corpus_sized_body(live_server, campaign, browser_of):
    add = "source,hypothesis\n" + "".join(f"sentence {i},another {i}\n" for i in range(40_000))
    assert len(add) > 1024 * 1024
    url = f"{live_server.url}/campaigns/demo/upload/"
    response = post_form(browser_of(campaign.created_by), url, {"format": "auto"}, files={"file": ("big.csv", add)})
    assert response.status_code == 302 and campaign.real_pairs.count() == 40_000


def test_csv_exports_neutralise_formulas_after_separators(live_server, campaign, api_of):
    without_controls(campaign)
    Pair.objects.create(campaign=campaign, external_id="x", source="safe;=1+1", hypothesis="ok|@SUM(A1)")
    text = api_of(campaign.created_by).get(f"{live_server.url}/api/campaigns/demo/export/?kind=pairs").text
    row = next(row for row in csv.DictReader(io.StringIO(text)) if row["pair_id"] == "x")
    assert row["source"] == "safe;'=1+1" and row["hypothesis"] == "ok|'@SUM(A1)"


def test_every_page_has_a_strict_csp_and_no_inline_script(live_server, campaign, browser_of):
    add_pairs(campaign, 1)
    judge = make_judge(campaign)
    judge_pages = [f"/j/demo/{judge.token}/{step}" for step in ("", "level/", "guidelines/")] + ["/j/demo/"]
    researcher_pages = ["/", "/campaigns/demo/", "/campaigns/demo/edit/", "/campaigns/demo/upload/", "/admin/"]
    researcher_pages += ["/campaigns/demo/report/", "/reports/?c=demo", "/account/api-key/", "/trash/"]
    researcher_pages += [f"/campaigns/demo/{page}/" for page in ("generations", "generations/new", "templates/new")]
    judge_browser = judge_session(live_server.url, judge)
    researcher = browser_of(campaign.created_by)
    for session, pages in ((judge_browser, judge_pages), (researcher, researcher_pages)):
        for path in pages:
            response = session.get(f"{live_server.url}{path}")
            assert response.status_code == 200, path
            policy = response.headers["Content-Security-Policy"]
            assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
            inline = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", response.text)
            handlers = re.findall(r"<[^>]+\son[a-z]+\s*=", response.text)
            assert not inline and not handlers, (path, inline, handlers)
    assert '"allowEval": false' in judge_browser.get(f"{live_server.url}/j/demo/").text


def test_the_api_schema_needs_a_researcher(live_server, campaign, api_of):
    assert requests.get(f"{live_server.url}/api/schema/").status_code in (401, 403)
    assert api_of(campaign.created_by).get(f"{live_server.url}/api/schema/").status_code == 200


def test_the_api_page_size_has_a_ceiling(live_server, campaign, api_of):
    add_pairs(campaign, 1200)
    api = api_of(campaign.created_by)
    page = api.get(f"{live_server.url}/api/campaigns/demo/pairs/?limit=1000").json()
    assert page["count"] > 1000 and len(page["results"]) == 1000
    # More is refused with a message, not quietly cut (or served as the default page).
    refused = api.get(f"{live_server.url}/api/campaigns/demo/pairs/?limit=100000")
    assert refused.status_code == 400 and refused.json() == {"limit": ["limit must be a whole number from 1 to 1000."]}


@pytest.fixture
def gunicorn_with_ssl_redirect(db):
    # gunicorn itself believes X-Forwarded-Proto from 127.0.0.1 unless told otherwise: production
    # sets FORWARDED_ALLOW_IPS to the proxy's address only (docs/security.md); here no proxy at all.
    with servers.production_gunicorn(
        connection,
        DJANGO_SECRET_KEY="Zq8#vL2!pW9-" * 5,
        DJANGO_SSL_REDIRECT="true",
        PARASOL_TRUSTED_PROXIES="0",
        FORWARDED_ALLOW_IPS="192.0.2.1",
    ) as url:
        yield url


def test_a_forged_forwarded_proto_is_ignored_without_a_declared_proxy(gunicorn_with_ssl_redirect):
    response = requests.get(
        f"{gunicorn_with_ssl_redirect}/accounts/login/",
        headers={"X-Forwarded-Proto": "https"},
        allow_redirects=False,
        timeout=60,
    )
    assert response.status_code == 301 and response.headers["Location"].startswith("https://")
