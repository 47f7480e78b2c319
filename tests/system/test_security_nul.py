"""NUL characters: "not found" in every URL, a clear 400 in every text sent (issue 25).

PostgreSQL stores no NUL in text and answers a query holding one with an error: before
`parasol.middleware.NulCharacterMiddleware`, a `%00` in a slug, a token, a crowd id or a
questionnaire answer was an HTTP 500, some of them anonymous. These tests run on SQLite and,
in `make test`, on PostgreSQL (Makefile PG_TESTS), where the 500s were.
"""

import re
from urllib.parse import quote

import pytest
import requests
from django.contrib.admindocs.views import extract_views_from_urlpatterns, simplify_regex
from django.urls import get_resolver
from rest_framework.authtoken.models import Token

from tests.factories import add_pairs, make_judge, remember
from tests.system.conftest import production_login

NUL = "\x00"
PLACEHOLDER = re.compile(r"<(?:\w+:)?(\w+)>")


def url_patterns():
    """Every URL pattern of the project (admin, API, judge, researcher and report pages), as a template."""
    templates = {simplify_regex(regex).replace("\\.", ".") for _, regex, _, _ in extract_views_from_urlpatterns(
        get_resolver().url_patterns
    )}  # fmt: skip
    return sorted(templates)


def sample_values(campaign, judge):
    """A valid value for each path parameter, so only the NUL makes the address wrong (a new name: "1")."""
    return {
        "slug": campaign.slug,
        "token": judge.token,
        "name": "table1",
        "fmt": "png",
        "format": "json",
        "pk": "1",
        "id": "1",
        "object_id": "1",
        "content_type_id": "1",
        "judge_id": str(judge.pk),
        "app_label": "campaigns",
        "url": "campaigns/pair/1/change",
    }


def addresses_with_a_nul(template, values):
    """The pattern filled with valid values, each parameter in turn holding a NUL (after its value, or alone)."""
    names = PLACEHOLDER.findall(template)
    for broken in names:
        for bad in (values.get(broken, "1") + NUL, NUL):
            filled = {name: quote(bad if name == broken else values.get(name, "1"), safe="/") for name in names}
            yield PLACEHOLDER.sub(lambda match, filled=filled: filled[match.group(1)], template)


@pytest.fixture
def setting(campaign):
    add_pairs(campaign, 3)
    return campaign, make_judge(campaign)


def test_the_walk_covers_every_kind_of_address(setting):
    templates = url_patterns()
    with_parameters = [template for template in templates if PLACEHOLDER.search(template)]
    assert len(with_parameters) > 80  # the admin's, the API's, the judge's, the researcher's
    for prefix in ("/admin/", "/api/campaigns/", "/j/", "/campaigns/", "/reports/"):
        assert any(template.startswith(prefix) for template in with_parameters), prefix


@pytest.mark.parametrize("who", ["anonymous", "judge", "researcher"])
def test_a_nul_in_any_path_parameter_of_any_url_is_not_found(client, setting, researcher, who):
    campaign, judge = setting
    if who == "researcher":
        client.force_login(researcher)
    elif who == "judge":
        remember(client, judge)
    values = sample_values(campaign, judge)
    answers = {}
    for template in url_patterns():
        for address in addresses_with_a_nul(template, values):
            for method in ("get", "post", "head"):
                answers[(method, address)] = getattr(client, method)(address).status_code
    assert len(answers) > 500
    assert {key: status for key, status in answers.items() if status != 404} == {}


@pytest.mark.parametrize(
    "method, address, data",
    [
        ("get", "/j/demo/?PROLIFIC_PID=worker%00", None),
        ("post", "/j/demo/", {"consent": "yes", "crowd_participant": "worker\x00"}),
        ("post", "/j/demo/", {"consent": "yes\x00"}),
        ("get", "/reports/?c=demo%00", None),
        ("get", "/reports/tables/table1.csv?c=demo&comments=1%00", None),
        ("post", "/accounts/login/", {"username": "researcher\x00", "password": "x"}),
    ],
)
def test_a_nul_in_a_query_or_form_is_a_clear_400(client, setting, method, address, data):
    response = getattr(client, method)(address, data) if data is not None else getattr(client, method)(address)
    assert response.status_code == 400
    assert "NUL character" in response.content.decode()


def test_a_nul_in_questionnaire_answers_is_refused_and_nothing_is_stored(client, setting):
    campaign, judge = setting
    from annotation.controls import protocol_of

    protocol = protocol_of(campaign)
    protocol.questionnaire = "How was it?"
    protocol.save()
    remember(client, judge)
    response = client.post(f"/j/{campaign.slug}/me/questions/", {"q0": "fine\x00"})
    assert response.status_code == 400 and "NUL character" in response.content.decode()
    judge.refresh_from_db()
    assert judge.questionnaire_answers in ({}, None)


def test_a_nul_in_a_researcher_form_is_refused_naming_the_field(client, setting, researcher):
    client.force_login(researcher)
    response = client.post("/campaigns/new/", {"slug": "other", "name": "A\x00name", "pairs_per_judge": 10})
    assert response.status_code == 400 and "The form field 'name' contains a NUL character" in response.content.decode()


@pytest.mark.parametrize(
    "method, address, body, where",
    [
        ("post", "/api/campaigns/", '{"slug": "other", "name": "bad\\u0000name"}', "at name "),
        ("patch", "/api/campaigns/demo/", '{"description": "bad\\u0000"}', "at description "),
        ("post", "/api/campaigns/demo/pairs/", '[{"source": "A.", "hypothesis": "B.\\u0000"}]', "at [0].hypothesis "),
        (
            "post",
            "/api/campaigns/demo/pairs/",
            '[{"source": "A.", "hypothesis": "B.", "metadata": {"k\\u0000": 1}}]',
            "(a key)",
        ),
    ],
)
def test_a_nul_in_an_api_body_is_a_clear_400_naming_its_place(
    client, setting, researcher, method, address, body, where
):
    client.force_login(researcher)
    response = getattr(client, method)(address, body, content_type="application/json")
    detail = response.json()["detail"]
    assert response.status_code == 400 and "NUL character" in detail and where in detail, detail


def test_an_escaped_backslash_before_u0000_is_text_not_a_nul(client, setting, researcher):
    client.force_login(researcher)
    response = client.patch("/api/campaigns/demo/", '{"description": "C:\\\\u0000"}', content_type="application/json")
    assert response.status_code == 200 and response.json()["description"] == "C:\\u0000"


def test_a_judge_cookie_with_a_nul_is_ignored(client, setting):
    campaign, _judge = setting
    client.cookies[f"parasol_judge_{campaign.pk}"] = "token\x00"
    assert client.get(f"/j/{campaign.slug}/").status_code == 200


def test_a_nul_through_gunicorn_is_never_a_500(gunicorn, campaign, researcher, settings):
    add_pairs(campaign, 3)
    judge = make_judge(campaign)
    judge_paths = ["/j/demo%00/", f"/j/demo/{judge.token}%00/", "/j/demo/%00/answer/", "/j/demo/me%00/questions/"]
    researcher_paths = ["/campaigns/demo%00/report/", "/reports/tables/table1%00.csv", "/api/campaigns/demo%00/"]
    researcher_paths += ["/admin/campaigns/campaign/1%00/change/", "/campaigns/demo%00/export/pairs.csv"]
    anonymous, logged_in = requests.Session(), production_login(researcher, settings, gunicorn)
    for session, paths in ((anonymous, judge_paths + researcher_paths), (logged_in, researcher_paths)):
        for path in paths:
            for method in ("GET", "POST", "HEAD"):
                response = session.request(method, f"{gunicorn}{path}", allow_redirects=False, timeout=60)
                assert response.status_code == 404, (method, path, response.status_code)
    joined = anonymous.post(f"{gunicorn}/j/demo/?PROLIFIC_PID=w%00", allow_redirects=False, timeout=60)
    assert joined.status_code == 400 and "NUL character" in joined.text
    token = Token.objects.create(user=researcher).key
    api = requests.post(
        f"{gunicorn}/api/campaigns/",
        data='{"slug": "x", "name": "a\\u0000"}',
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
        timeout=60,
    )
    assert api.status_code == 400 and "NUL character" in api.json()["detail"]
