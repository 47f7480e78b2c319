import pytest
from django.urls import reverse

from campaigns.models import Campaign
from campaigns.task_types import default_task_type, get_task_type, task_type_names
from tests.factories import add_pairs, make_judge

RESEARCHER_PAGES = [
    ("campaigns-list-campaigns", False),
    ("campaigns-create-campaign", False),
    ("annotation-show-campaign", True),
    ("annotation-edit-campaign", True),
    ("annotation-upload-corpus", True),
    ("reports-export-pairs", True),
    ("reports-export-judgments", True),
]


def url_of(name, needs_slug):
    return reverse(name, args=["demo"]) if needs_slug else reverse(name)


@pytest.mark.parametrize("name, needs_slug", RESEARCHER_PAGES)
def test_anonymous_users_reach_no_researcher_page(client, campaign, name, needs_slug):
    response = client.get(url_of(name, needs_slug))
    assert response.status_code == 302 and "/accounts/login/" in response.url


@pytest.mark.parametrize("name, needs_slug", RESEARCHER_PAGES)
def test_non_staff_users_reach_no_researcher_page(client, campaign, outsider, name, needs_slug):
    client.force_login(outsider)
    response = client.get(url_of(name, needs_slug))
    assert response.status_code == 302 and "/accounts/login/" in response.url


@pytest.mark.parametrize("name, needs_slug", RESEARCHER_PAGES)
def test_researchers_reach_every_page(client, campaign, researcher, name, needs_slug):
    client.force_login(researcher)
    assert client.get(url_of(name, needs_slug)).status_code == 200


def test_the_parent_of_the_campaign_pages_is_the_list_for_researchers_and_the_login_for_others(
    client, campaign, researcher, outsider
):
    assert client.get("/campaigns/", follow=True).redirect_chain[-1][0].startswith("/accounts/login/")
    client.force_login(outsider)
    assert client.get("/campaigns/", follow=True).redirect_chain[-1][0].startswith("/accounts/login/")
    client.force_login(researcher)
    listing = client.get("/campaigns/", follow=True)
    assert listing.status_code == 200 and listing.redirect_chain == [(reverse("campaigns-list-campaigns"), 302)]
    assert campaign.name in listing.content.decode()


def test_it_creates_a_campaign_with_the_default_training_trial(client, researcher):
    client.force_login(researcher)
    response = client.post(
        reverse("campaigns-create-campaign"),
        {"name": "Pilot", "slug": "pilot", "pairs_per_judge": 20, "overlap_target": 2, "is_open": "on"},
    )
    campaign = Campaign.objects.get(slug="pilot")
    assert response.url == campaign.get_absolute_url()
    assert campaign.created_by == researcher and campaign.pairs_per_judge == 20
    assert campaign.training_pairs.count() == 5


def test_it_rejects_a_duplicate_slug(client, campaign, researcher):
    client.force_login(researcher)
    response = client.post(
        reverse("campaigns-create-campaign"),
        {"name": "Again", "slug": "demo", "pairs_per_judge": 5, "overlap_target": 1},
    )
    assert response.status_code == 200 and "This slug is not available" in response.content.decode()


def test_the_dashboard_refreshes_its_progress_partial(client, campaign, researcher):
    add_pairs(campaign, 2)
    client.force_login(researcher)
    page = client.get(reverse("annotation-show-campaign", args=["demo"])).content.decode()
    assert 'hx-trigger="every 5s"' in page
    partial = client.get(reverse("annotation-show-campaign", args=["demo"]), HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and "Judges by English level" in partial


def test_it_closes_and_reopens_a_campaign(client, campaign, researcher):
    client.force_login(researcher)
    client.post(reverse("campaigns-toggle-open", args=["demo"]))
    campaign.refresh_from_db()
    assert not campaign.is_open
    client.post(reverse("campaigns-toggle-open", args=["demo"]))
    campaign.refresh_from_db()
    assert campaign.is_open


def test_the_admin_lists_every_model(client, researcher):
    researcher.is_superuser = True
    researcher.save()
    client.force_login(researcher)
    page = client.get("/admin/").content.decode()
    for model in [
        "Campaigns",
        "Pairs",
        "Judges",
        "Assignments",
        "Judgments",
        "Campaign protocols",
        "Scores",
        "Prompt templates",
        "Generation runs",
        "Generation sources",
        "Generation outputs",
    ]:
        assert model in page


@pytest.mark.parametrize(
    "path",
    [
        "campaigns/campaign",
        "campaigns/pair",
        "generation/prompttemplate",
        "generation/generationrun",
        "generation/generationsource",
        "generation/generationoutput",
        "annotation/judge",
        "annotation/assignment",
        "annotation/judgment",
        "annotation/campaignprotocol",
        "campaigns/score",
    ],
)
def test_every_admin_list_renders(client, campaign, researcher, path):
    researcher.is_superuser = True
    researcher.save()
    add_pairs(campaign, 2)
    make_judge(campaign)
    client.force_login(researcher)
    assert client.get(f"/admin/{path}/").status_code == 200


def test_it_creates_a_criteria_campaign_with_system_keys(client, researcher):
    client.force_login(researcher)
    fields = {"name": "PEM", "slug": "pem", "pairs_per_judge": 20, "overlap_target": 2, "task_type": "criteria"}

    client.post(reverse("campaigns-create-campaign"), {**fields, "system_keys": "generator, run"})

    campaign = Campaign.objects.get(slug="pem")
    assert campaign.task_type == "criteria" and campaign.system_key_list() == ["generator", "run"]
    assert "Every morning the bakery" in campaign.training_pairs.first().hypothesis


def test_it_refuses_an_unknown_task_type(client, researcher):
    client.force_login(researcher)
    fields = {"name": "X", "slug": "x", "pairs_per_judge": 20, "overlap_target": 2, "task_type": "spans-of-nothing"}

    response = client.post(reverse("campaigns-create-campaign"), fields)

    assert response.status_code == 200 and not Campaign.objects.filter(slug="x").exists()
    assert "spans-of-nothing" in response.content.decode()


def test_the_edit_page_sets_system_keys_and_locks_the_task_type_once_judging_started(client, campaign, researcher):
    from annotation import assignment
    from tests.factories import add_pairs, make_judge

    add_pairs(campaign, 2)
    assignment.next_assignment(make_judge(campaign))
    client.force_login(researcher)
    fields = {"name": "Demo", "slug": "demo", "pairs_per_judge": 20, "overlap_target": 2, "is_open": "on"}
    protocol = {"protocol-control_share": "0.1", "protocol-max_judges": ""}

    page = client.get(reverse("annotation-edit-campaign", args=["demo"])).content.decode()
    client.post(
        reverse("annotation-edit-campaign", args=["demo"]),
        {**fields, **protocol, "system_keys": "run", "task_type": "criteria"},
    )

    campaign.refresh_from_db()
    assert 'name="task_type"' in page and "disabled" in page.split('name="task_type"')[1].split(">")[0]
    assert campaign.system_keys == "run" and campaign.task_type == "similarity"


@pytest.mark.parametrize("task_type", task_type_names())
def test_the_campaign_page_offers_the_taggings_and_the_detector_when_its_type_tags_words(client, researcher, task_type):
    Campaign.objects.create(slug="typed", name="Typed", task_type=task_type, created_by=researcher)
    client.force_login(researcher)
    page = client.get(reverse("annotation-show-campaign", args=["typed"])).content.decode()
    tags_words = get_task_type(task_type).tags_words
    assert (reverse("reports-export-taggings", args=["typed"]) in page) is tags_words
    assert (reverse("reports-show-detector", args=["typed"]) in page) is tags_words


def test_a_new_campaign_takes_the_registrys_default_task_type(researcher):
    assert Campaign.objects.create(slug="plain", name="Plain").task_type == default_task_type()
