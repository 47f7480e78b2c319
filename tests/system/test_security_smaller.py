"""The second review's smaller findings, replayed against the live server (issue 25).

No cache keeps API answers or the API key page; the login lockout sees one address however
it is spelt; only a campaign's owner changes its slug; a taken slug says only "not available";
a non-finite BLEU range is refused by every command; a span index or number field takes
ASCII digits only; the demo's published password is refused in production.
"""

import io
import re

import pytest
import requests
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Judgment
from campaigns.models import Campaign
from tests.factories import add_pairs, make_judge, without_controls
from tests.system.conftest import log_in, post_form
from tests.system.test_security_defaults import PRODUCTION_ENV, run_manage

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def colleague(django_user_model):
    return django_user_model.objects.create_user("colleague", password="pw-colleague-123", is_staff=True)


# Cache-Control: no-store ------------------------------------------------------------------------


def test_the_api_key_page_and_every_api_answer_are_never_stored(live_server, campaign, browser_of, api_of):
    add_pairs(campaign, 2)
    browser = browser_of(campaign.created_by)
    page = browser.get(f"{live_server.url}/account/api-key/")
    regenerated = post_form(browser, f"{live_server.url}/account/api-key/", {})
    api = api_of(campaign.created_by)
    answers = [
        page,
        regenerated,
        api.get(f"{live_server.url}/api/campaigns/"),
        api.get(f"{live_server.url}/api/campaigns/demo/"),
        api.get(f"{live_server.url}/api/campaigns/demo/pairs/"),
        api.get(f"{live_server.url}/api/campaigns/demo/export/?kind=pairs"),
        api.get(f"{live_server.url}/api/campaigns/demo/judgments/"),
        api.get(f"{live_server.url}/api/campaigns/nothing/"),
        requests.get(f"{live_server.url}/api/campaigns/"),  # refused: still not stored
    ]
    for response in answers:
        assert "no-store" in response.headers.get("Cache-Control", ""), response.url


# The login lockout and spellings of one address ----------------------------------------------


SPELLINGS = ["::ffff:10.0.0.5", "010.000.000.005", "10.0.0.5:1234", "[::ffff:10.0.0.5]:443", "10.0.0.05"]


def test_the_login_lockout_sees_one_address_however_it_is_spelt(live_server, researcher, settings):
    settings.PARASOL_TRUSTED_PROXIES = 1  # the proxy's header names the client
    assert len(SPELLINGS) >= settings.AXES_FAILURE_LIMIT
    for spelling in SPELLINGS:
        session = requests.Session()
        session.headers["X-Forwarded-For"] = spelling
        post_form(session, f"{live_server.url}/accounts/login/", {"username": "researcher", "password": "guess"})
    session = requests.Session()
    session.headers["X-Forwarded-For"] = "10.0.0.5"
    right = post_form(
        session, f"{live_server.url}/accounts/login/", {"username": "researcher", "password": "pw-researcher-123"}
    )
    assert right.status_code == 429
    # Another address is a different client.
    session.headers["X-Forwarded-For"] = "10.0.0.6"
    other = post_form(
        session, f"{live_server.url}/accounts/login/", {"username": "researcher", "password": "pw-researcher-123"}
    )
    assert other.status_code == 302


# The slug: owner only, and "not available" ---------------------------------------------------


EDIT = {"name": "Renamed", "pairs_per_judge": 50, "overlap_target": 3, "is_open": "on", "task_type": "similarity"}
EDIT |= {"protocol-control_share": "0.1", "protocol-consent_text": "", "protocol-completion_code": ""}


def test_only_the_owner_changes_a_campaigns_slug(live_server, campaign, colleague, browser_of, api_of):
    campaign.shared_with.add(colleague)
    colleague.user_permissions.set(Permission.objects.filter(codename__in=["view_campaign", "change_campaign"]))
    url = f"{live_server.url}/campaigns/demo/edit/"
    refused = post_form(browser_of(colleague), url, EDIT | {"slug": "hijacked"})
    assert refused.status_code == 200 and "Only the campaign&#x27;s owner can change its slug" in refused.text
    patched = api_of(colleague).patch(f"{live_server.url}/api/campaigns/demo/", json={"slug": "hijacked"})
    assert patched.status_code == 403 and "Only the campaign's owner can change its slug" in patched.json()["detail"]
    admin = post_form(
        log_in(live_server.url, "colleague", "pw-colleague-123"),
        f"{live_server.url}/admin/campaigns/campaign/{campaign.pk}/change/",
        {"name": "Demo", "slug": "hijacked", "pairs_per_judge": 50, "overlap_target": 3, "overlap_max": 5},
    )
    assert "Only the campaign&#x27;s owner can change its slug" in admin.text
    campaign.refresh_from_db()
    assert campaign.slug == "demo"
    # Other fields stay theirs to edit, and the owner still renames.
    kept = post_form(browser_of(colleague), url, EDIT | {"slug": "demo"})
    assert kept.status_code == 302, re.findall(r"errorlist[^>]*>(.*?)</ul>", kept.text, re.DOTALL)
    assert api_of(colleague).patch(f"{live_server.url}/api/campaigns/demo/", json={"name": "Again"}).status_code == 200
    assert post_form(browser_of(campaign.created_by), url, EDIT | {"slug": "moved"}).status_code == 302
    campaign.refresh_from_db()
    assert (campaign.slug, campaign.name) == ("moved", "Renamed")


def test_a_slug_in_someones_trash_is_only_not_available(live_server, campaign, colleague, browser_of, api_of):
    campaign.move_to_trash()
    answers = [
        post_form(browser_of(colleague), f"{live_server.url}/campaigns/new/", EDIT | {"slug": "demo"}).text,
        api_of(colleague).post(f"{live_server.url}/api/campaigns/", json={"slug": "demo", "name": "X"}).text,
    ]
    for text in answers:
        assert "This slug is not available" in text
        said = " ".join(re.findall(r'<ul class="errorlist[^>]*>(.*?)</ul>', text, re.DOTALL)) or text  # form or JSON
        assert not re.search(r"trash|researcher|exists", said, re.IGNORECASE), said
    assert Campaign.objects.filter(slug="demo").count() == 1


# BLEU ranges: finite numbers from 0 to 100 ---------------------------------------------------


@pytest.mark.parametrize(
    "low, high", [("nan", "20"), ("5", "nan"), ("inf", "20"), ("5", "inf"), ("-1", "20"), ("20", "5")]
)
def test_every_command_refuses_a_bleu_range_that_is_not_finite_and_ordered(tmp_path, campaign, low, high):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"source": "A cat sat on the mat.", "hypothesis": "A cat was on the mat."}\n')
    sources = tmp_path / "sources.txt"
    sources.write_text("A cat sat on the mat.\n")
    commands = [
        ("import_pairs", "demo", str(pairs), "--bleu-range", low, high),
        ("generate", "demo", str(sources), "--template", "naive", "--inline", "--bleu-range", low, high),
    ]
    for command in commands:
        with pytest.raises(CommandError, match="BLEU range"):
            call_command(*command, stdout=io.StringIO(), stderr=io.StringIO())
    assert campaign.real_pairs.count() == 0 and not campaign.generation_runs.exists()


@pytest.mark.parametrize("low", ["nan", "inf", "-1", "101"])
def test_the_upload_form_refuses_the_same(live_server, campaign, browser_of, low):
    data = {"format": "auto", "bleu_low": low, "bleu_high": "20"}
    files = {"file": ("p.csv", "source,hypothesis\nA cat sat.,A cat was.\n")}
    response = post_form(browser_of(campaign.created_by), f"{live_server.url}/campaigns/demo/upload/", data, files)
    assert response.status_code == 200 and campaign.real_pairs.count() == 0


# Whole numbers in judges' answers: ASCII digits only ------------------------------------------


def judge_answering(live_server, campaign):
    """A judge's browser on a real pair of a spans campaign, and that pair's assignment."""
    campaign.task_type = "spans"
    campaign.save()
    without_controls(campaign)
    add_pairs(campaign, 2)
    judge = make_judge(campaign)
    session = requests.Session()
    session.cookies.set(f"parasol_judge_{campaign.pk}", judge.token)
    page = session.get(f"{live_server.url}/j/demo/me/")
    assignment = re.search(r'name="assignment" value="(\d+)"', page.text).group(1)
    return session, assignment


@pytest.mark.parametrize(
    "field, value",
    [
        ("source_tags", "\u0663"),  # ARABIC-INDIC DIGIT THREE
        ("source_tags", "\u06f1"),  # EXTENDED ARABIC-INDIC DIGIT ONE
        ("source_tags", "\uff11"),  # FULLWIDTH DIGIT ONE
        ("source_tags", "1_0"),
        ("source_tags", "+1"),
        ("source_tags", " 1"),
        ("assignment", "\u0663"),
        ("response_ms", "\u0665\u0660\u0660"),
    ],
)
def test_a_number_not_in_ascii_digits_is_refused(live_server, campaign, field, value):
    session, assignment = judge_answering(live_server, campaign)
    url = f"{live_server.url}/j/demo/me/answer/"
    data = {"assignment": assignment, "source_tags": "0", "csrfmiddlewaretoken": session.cookies["csrftoken"]}
    response = session.post(url, data | {field: value}, headers={"Referer": url}, allow_redirects=False)
    assert response.status_code == 400
    assert not Judgment.objects.filter(assignment__in=Assignment.objects.filter(pk=assignment)).exists()
    ok = session.post(url, data, headers={"Referer": url}, allow_redirects=False)
    assert ok.status_code in (200, 302) and Judgment.objects.filter(assignment_id=assignment).exists()


# The demo account's published password --------------------------------------------------------


@pytest.mark.parametrize("password", ["parasol-demo", " Parasol-Demo "])
def test_load_demo_in_production_refuses_the_published_password(tmp_path, password):
    db = {"SQLITE_PATH": str(tmp_path / "prod.sqlite3")}
    assert run_manage("migrate", "--noinput", **PRODUCTION_ENV, **db).returncode == 0
    result = run_manage("load_demo", "--allow-production", **PRODUCTION_ENV, **db, PARASOL_DEMO_PASSWORD=password)
    assert result.returncode != 0 and "published password" in result.stderr


def test_through_gunicorn_the_api_and_the_api_key_page_say_no_store(gunicorn, campaign, researcher, settings):
    from rest_framework.authtoken.models import Token

    from tests.system.conftest import production_login

    browser = production_login(researcher, settings, gunicorn)
    api = requests.Session()
    api.headers["Authorization"] = f"Token {Token.objects.get_or_create(user=researcher)[0].key}"
    answers = [
        browser.get(f"{gunicorn}/account/api-key/"),
        api.get(f"{gunicorn}/api/campaigns/"),
        api.get(f"{gunicorn}/api/campaigns/demo/pairs/"),
        requests.get(f"{gunicorn}/api/campaigns/"),  # refused, and still not stored
    ]
    assert [answer.status_code for answer in answers][:3] == [200, 200, 200]
    for answer in answers:
        assert "no-store" in answer.headers.get("Cache-Control", ""), answer.url
