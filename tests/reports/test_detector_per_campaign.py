"""No campaign changes another's `paratag` scores (issue 36, section 3).

Each campaign is scored by its own detectors (the latest by default), or by one version it
names of a campaign its researcher can see; the signature says which; the panel and the
files are keyed by the campaign's pk, never its slug. The detectors here are untrained (the
packaged MiniLM with a head seeded differently per version): what is under test is which
detector scores which campaign, not its quality (test_span_detector.py trains one).
"""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaigns.models import Campaign, Score
from campaigns.scores import latest_signatures
from metrics.loading import embedded_minilm_path
from metrics.paratag import build_detector, campaign_detectors_path
from metrics.paratag_training import store
from scoring import service
from tests.factories import add_pairs, without_controls

pytestmark = pytest.mark.django_db


@pytest.fixture
def detectors_root(tmp_path, monkeypatch):
    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(tmp_path))
    service.scorer.cache_clear()
    yield tmp_path
    service.scorer.cache_clear()


def train(campaign, seed):
    """Store a new version in the campaign's own directory, as a (re)training does: a head seeded by `seed`."""
    import torch

    torch.manual_seed(seed)
    tokenizer, detector = build_detector(embedded_minilm_path())
    manifest = {"campaign": campaign.slug, "campaign_pk": campaign.pk, "encoder": "MiniLM (untrained head)"}
    return store(tokenizer, detector, manifest, campaign_detectors_path(campaign.pk), f"seed{seed}")


def span_campaign(researcher, slug, n=3):
    campaign = Campaign.objects.create(slug=slug, name=slug, task_type="spans", created_by=researcher)
    without_controls(campaign)
    add_pairs(campaign, n)
    return campaign


def scores_of(campaign):
    """{pair_id: (signature, value)} of the campaign's paratag scores."""
    rows = Score.objects.filter(pair__campaign=campaign, metric="paratag").select_related("pair")
    return {(score.pair.external_id, score.signature): score.value for score in rows}


def test_two_campaigns_with_their_own_detectors_score_independently(researcher, detectors_root):
    first, second = span_campaign(researcher, "first"), span_campaign(researcher, "second")
    train(first, seed=1)
    train(second, seed=2)
    assert service.score_campaign_inline(first, "paratag") == 3
    assert service.score_campaign_inline(second, "paratag") == 3
    before = scores_of(second)
    (signature,) = {signature for _, signature in before}
    assert f"detector:campaign-{second.pk}/0001-seed2" in signature

    retrained = train(first, seed=3)  # the first campaign's researcher retrains
    service.missing_pair_pks("paratag")  # a sweep of every campaign sees nothing new to do for the second
    assert service.missing_pair_pks("paratag", second.pk)[1] == []
    service.score_inline([pair.pk for pair in (*first.real_pairs, *second.real_pairs)], ["paratag"])

    assert scores_of(second) == before
    first_signatures = {signature for _, signature in scores_of(first)}
    assert len(first_signatures) == 2 and any(f"campaign-{first.pk}/{retrained.name}" in s for s in first_signatures)
    assert latest_signatures(Score.objects.filter(pair__campaign=second))["paratag"] == signature


def test_a_campaign_may_name_a_version_of_another_it_can_see_and_keeps_it(researcher, detectors_root):
    source, borrower = span_campaign(researcher, "source"), span_campaign(researcher, "borrower")
    named = train(source, seed=1)
    borrower.paratag_detector = f"{source.pk}/{named.name}"
    borrower.save()
    service.score_campaign_inline(borrower, "paratag")
    before = scores_of(borrower)
    assert all(f"detector:campaign-{source.pk}/{named.name}" in signature for _, signature in before)

    train(source, seed=2)  # the other campaign's new version is not the one named
    assert service.score_campaign_inline(borrower, "paratag") == 0
    assert scores_of(borrower) == before


def test_a_campaign_without_a_detector_of_its_own_is_not_scored_by_anothers(researcher, detectors_root):
    trained, untrained = span_campaign(researcher, "trained"), span_campaign(researcher, "untrained")
    train(trained, seed=1)
    _signature, missing = service.missing_pair_pks("paratag")  # the sweep of every campaign
    assert set(missing) == {pair.pk for pair in trained.real_pairs}
    service.score_inline([pair.pk for pair in untrained.real_pairs], ["paratag"])
    assert scores_of(untrained) == {}


def test_a_reused_slug_shows_none_of_the_old_campaigns_detectors(client, researcher, detectors_root):
    old = span_campaign(researcher, "reused")
    train(old, seed=1)
    old.delete()
    new = span_campaign(researcher, "reused")
    client.force_login(researcher)
    panel = client.get(reverse("reports-show-detector", args=["reused"])).content.decode()
    assert "0001-seed1" not in panel and "No detector has been trained on this campaign yet" in panel
    assert "this campaign&#x27;s latest detector" in panel or "this campaign's latest detector" in panel
    assert new.detector_choice() == (new.pk, "latest")


@pytest.fixture
def others_campaign(django_user_model, detectors_root):
    other = django_user_model.objects.create_user("other", password="pw-other-123", is_staff=True)
    campaign = span_campaign(other, "others")
    return campaign, train(campaign, seed=1)


def api_client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def test_the_api_refuses_a_detector_of_a_campaign_the_researcher_cannot_see(researcher, campaign, others_campaign):
    other, version = others_campaign
    api = api_client(researcher)
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"paratag_detector": f"{other.pk}/{version.name}"})
    assert response.status_code == 409  # well formed (the schema's pattern), but not a detector this user can name
    assert response.json()["paratag_detector"] == [f"No campaign you can see has the id {other.pk}."]
    malformed = api.patch(f"/api/campaigns/{campaign.slug}/", {"paratag_detector": "news"})
    assert malformed.status_code == 400 and "Name a detector as" in malformed.json()["paratag_detector"][0]
    campaign.refresh_from_db()
    assert campaign.paratag_detector == ""
    other.shared_with.add(researcher)  # shared: now the researcher may name it
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"paratag_detector": f"{other.pk}/{version.name}"})
    assert response.status_code == 200 and response.json()["paratag_detector"] == f"{other.pk}/{version.name}"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("news", "Name a detector as <campaign id>/<version>"),
        ("\u0661/0001-news", "Name a detector as <campaign id>/<version>"),  # an Arabic-Indic digit
        ("99999999999999999999/0001-news", "Name a detector as <campaign id>/<version>"),  # past SQLite's integers
        ("{pk}/0009-none", "has no detector '0009-none'"),
        ("{pk}/../../etc", "has no detector '../../etc'"),
    ],
)
def test_the_settings_form_refuses_a_malformed_or_missing_version(client, researcher, campaign, value, message):
    client.force_login(researcher)
    url = reverse("annotation-edit-campaign", args=[campaign.slug])
    data = {"name": campaign.name, "slug": campaign.slug, "pairs_per_judge": 50, "overlap_target": 3}
    response = client.post(url, {**data, "paratag_detector": value.format(pk=campaign.pk)})
    assert message in response.content.decode().replace("&#x27;", "'").replace("&lt;", "<").replace("&gt;", ">")
    campaign.refresh_from_db()
    assert campaign.paratag_detector == ""


def test_every_per_campaign_metric_says_what_it_takes_from_a_campaign(campaign, detectors_root):
    from metrics.registry import is_per_campaign, metric_names
    from scoring.campaign_metrics import OPTIONS

    per_campaign = [name for name in metric_names() if is_per_campaign(name)]
    assert per_campaign and set(per_campaign) == set(OPTIONS)
    for name in per_campaign:
        assert service.scorer_for(name, campaign) is service.scorer_for(name, campaign)  # one scorer per choice


def test_the_campaign_admin_refuses_a_detector_of_a_campaign_its_editor_cannot_see(
    researcher, campaign, others_campaign
):
    from django.forms.models import model_to_dict

    from campaigns.admin import CampaignAdminForm

    other, version = others_campaign
    data = {**model_to_dict(campaign), "shared_with": [], "paratag_detector": f"{other.pk}/{version.name}"}
    form = CampaignAdminForm(data, instance=campaign)
    form.user = researcher
    assert not form.is_valid()
    assert form.errors["paratag_detector"] == [f"No campaign you can see has the id {other.pk}."]
