"""Researchers trust only their own campaigns: the admin, API keys, sharing and deletion (live server)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token

from annotation.models import Judge, Judgment
from campaigns.models import Campaign, Pair
from generation.models import GenerationOutput, GenerationRun, GenerationSource, PromptTemplate
from tests.factories import add_pairs, make_judge
from tests.system.conftest import post_form

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def colleague(db):
    """A staff user holding every model permission in the admin, who owns nothing of `campaign`."""
    user = get_user_model().objects.create_user("colleague", password="pw-colleague-123", is_staff=True)
    user.user_permissions.set(Permission.objects.all())
    return user


@pytest.fixture
def secret_campaign(campaign):
    add_pairs(campaign, 2)
    judge = make_judge(campaign)
    Judge.objects.filter(pk=judge.pk).update(crowd_participant="PROLIFIC-SECRET-ID")
    PromptTemplate.objects.create(campaign=campaign, name="secret-template", turns=[])
    run = GenerationRun.objects.create(campaign=campaign, templates=["secret-template"])
    source = GenerationSource.objects.create(run=run, position=0, text="Source sentence number secret")
    GenerationOutput.objects.create(run=run, source=source, template="secret-template", raw_output="x")
    return campaign


ADMIN_LISTS = [
    "campaigns/campaign",
    "campaigns/pair",
    "annotation/judge",
    "annotation/assignment",
    "annotation/judgment",
    "annotation/campaignprotocol",
    "campaigns/score",
    "generation/prompttemplate",
    "generation/generationrun",
    "generation/generationsource",
    "generation/generationoutput",
]


@pytest.mark.parametrize("model", ADMIN_LISTS)
def test_the_admin_lists_nothing_of_someone_elses_campaign(live_server, secret_campaign, colleague, browser_of, model):
    page = browser_of(colleague).get(f"{live_server.url}/admin/{model}/")
    assert page.status_code == 200
    for secret in ("Demo", "Source sentence number", "PROLIFIC-SECRET-ID", "judge-0", "secret-template"):
        assert secret not in page.text, (model, secret)


def test_the_admin_change_page_of_someone_elses_objects_is_refused(live_server, secret_campaign, colleague, browser_of):
    browser = browser_of(colleague)
    pair = Pair.objects.filter(campaign=secret_campaign).first()
    judge = Judge.objects.get()
    for url in (
        f"/admin/campaigns/campaign/{secret_campaign.pk}/change/",
        f"/admin/campaigns/pair/{pair.pk}/change/",
        f"/admin/annotation/judge/{judge.pk}/change/",
        f"/admin/campaigns/campaign/{secret_campaign.pk}/delete/",
    ):
        response = browser.get(f"{live_server.url}{url}", allow_redirects=False)
        assert response.status_code in (302, 404) and "Source sentence" not in response.text, url


def test_a_shared_colleague_cannot_add_themselves_or_others_nor_delete(
    live_server, secret_campaign, colleague, browser_of
):
    other = get_user_model().objects.create_user("other", password="pw-other-123", is_staff=True)
    secret_campaign.shared_with.add(colleague)
    browser = browser_of(colleague)
    change = f"{live_server.url}/admin/campaigns/campaign/{secret_campaign.pk}/change/"
    form = browser.get(change).text
    assert 'name="shared_with"' not in form
    data = {"name": "Demo", "slug": "demo", "pairs_per_judge": 50, "overlap_target": 3, "is_open": "on"}
    post_form(browser, change, data | {"shared_with": [colleague.pk, other.pk]})
    assert list(secret_campaign.shared_with.all()) == [colleague]
    # The researcher page's edit form does not offer sharing to them either.
    edit = browser.get(f"{live_server.url}/campaigns/demo/edit/").text
    assert 'name="shared_with"' not in edit
    post_form(browser, f"{live_server.url}/campaigns/demo/edit/", data | {"shared_with": [other.pk]})
    assert list(secret_campaign.shared_with.all()) == [colleague]
    delete = f"{live_server.url}/admin/campaigns/campaign/{secret_campaign.pk}/delete/"
    response = post_form(browser, delete, {"post": "yes"})
    assert response.status_code == 403
    assert Campaign.objects.filter(pk=secret_campaign.pk, deleted_at__isnull=True).exists()


def test_the_sharing_widget_lists_colleagues_only(live_server, campaign, browser_of):
    users = get_user_model().objects
    users.create_superuser("root", password="pw-root-123")
    users.create_user("plainuser", password="pw-plainuser-123")
    users.create_user("peer", password="pw-peer-123", is_staff=True)
    page = browser_of(campaign.created_by).get(f"{live_server.url}/campaigns/demo/edit/").text
    assert "peer" in page and "root" not in page and "plainuser" not in page


def test_the_token_admin_is_gone_and_each_researcher_sees_only_their_own_key(
    live_server, researcher, colleague, browser_of
):
    victim_key = Token.objects.create(user=researcher).key
    browser = browser_of(colleague)
    for url in ("/admin/authtoken/tokenproxy/", "/admin/authtoken/tokenproxy/add/", "/admin/authtoken/token/"):
        assert browser.get(f"{live_server.url}{url}").status_code == 404, url
    page = browser.get(f"{live_server.url}/account/api-key/")
    assert page.status_code == 200 and victim_key not in page.text
    issued = post_form(browser, f"{live_server.url}/account/api-key/", {})
    key = Token.objects.get(user=colleague).key
    assert issued.status_code == 200 and key in issued.text and victim_key not in issued.text
    assert Token.objects.get(user=researcher).key == victim_key  # untouched
    assert key not in browser.get(f"{live_server.url}/account/api-key/").text  # shown only once


def test_only_the_owner_deletes_through_the_api_and_deletion_is_recoverable(
    live_server, secret_campaign, colleague, api_of, browser_of
):
    secret_campaign.shared_with.add(colleague)
    judgments_before = Judgment.objects.count()
    refused = api_of(colleague).delete(f"{live_server.url}/api/campaigns/demo/")
    assert refused.status_code == 403
    assert Campaign.objects.live().filter(pk=secret_campaign.pk).exists()
    owner = secret_campaign.created_by
    assert api_of(owner).delete(f"{live_server.url}/api/campaigns/demo/").status_code == 204
    assert api_of(owner).get(f"{live_server.url}/api/campaigns/demo/").status_code == 404
    assert Pair.objects.filter(campaign=secret_campaign).count() > 0 and Judgment.objects.count() == judgments_before
    assert "Demo" not in browser_of(colleague).get(f"{live_server.url}/trash/").text  # not theirs to restore
    browser = browser_of(owner)
    assert "Demo" in browser.get(f"{live_server.url}/trash/").text
    assert post_form(browser, f"{live_server.url}/trash/", {"slug": "demo"}).status_code == 302
    assert api_of(owner).get(f"{live_server.url}/api/campaigns/demo/").status_code == 200


def test_the_slug_new_is_reserved(live_server, researcher, api_of, browser_of):
    response = api_of(researcher).post(f"{live_server.url}/api/campaigns/", json={"slug": "new", "name": "x"})
    assert response.status_code == 409 and "reserved" in response.text
    page = post_form(
        browser_of(researcher),
        f"{live_server.url}/campaigns/new/",
        {"name": "x", "slug": "new", "pairs_per_judge": 5, "overlap_target": 1},
    )
    assert page.status_code == 200 and "reserved" in page.text
    assert not Campaign.objects.filter(slug="new").exists()
