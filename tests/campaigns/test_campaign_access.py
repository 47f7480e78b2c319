"""Researchers see only the campaigns they own or that are shared with them."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaigns.models import Campaign


@pytest.fixture
def colleague(db):
    return get_user_model().objects.create_user("colleague", password="pw-colleague-1", is_staff=True)


@pytest.fixture
def theirs(colleague):
    return Campaign.objects.create(slug="theirs", name="Someone else's study", created_by=colleague)


@pytest.mark.parametrize(
    "name", ["annotation-show-campaign", "annotation-edit-campaign", "reports-export-pairs", "reports-show-report"]
)
def test_another_researchers_campaign_is_a_404(client, researcher, theirs, name):
    client.force_login(researcher)
    assert client.get(reverse(name, args=["theirs"])).status_code == 404


def test_the_list_shows_only_own_and_shared_campaigns(client, researcher, campaign, theirs):
    client.force_login(researcher)
    page = client.get(reverse("campaigns-list-campaigns")).content.decode()
    assert "Demo" in page and "Someone else" not in page
    theirs.shared_with.add(researcher)
    page = client.get(reverse("campaigns-list-campaigns")).content.decode()
    assert "Someone else" in page
    assert client.get(reverse("annotation-show-campaign", args=["theirs"])).status_code == 200


def test_the_api_hides_other_researchers_campaigns(researcher, campaign, theirs):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    slugs = [c["slug"] for c in api.get("/api/campaigns/").json()["results"]]
    assert slugs == ["demo"]
    assert api.get("/api/campaigns/theirs/").status_code == 404
    assert (
        api.post("/api/campaigns/theirs/pairs/", [{"source": "a", "hypothesis": "b"}], format="json").status_code == 404
    )
    assert api.get("/api/campaigns/theirs/export/").status_code == 404
    response = api.post(
        "/api/generations/", {"campaign": "theirs", "templates": ["naive"], "sources": ["x"]}, format="json"
    )
    assert response.status_code == 404 and theirs.generation_runs.count() == 0  # not theirs: no such campaign


def test_the_cross_report_refuses_a_campaign_it_cannot_see(client, researcher, campaign, theirs):
    client.force_login(researcher)
    assert client.get(reverse("reports-show-cross-report") + "?c=demo&c=theirs").status_code == 404


def test_a_superuser_sees_every_campaign(client, theirs):
    admin = get_user_model().objects.create_superuser("boss", password="pw-boss-123")
    client.force_login(admin)
    assert client.get(reverse("annotation-show-campaign", args=["theirs"])).status_code == 200
