"""The dashboard's scoring panel."""

from django.contrib.auth import get_user_model
from django.urls import reverse

from scoring import service
from tests.factories import add_pairs


def test_it_shows_pairs_scored_per_metric(client, researcher, campaign, settings):
    settings.PARASOL_METRICS = ["lev", "bleu"]
    pairs = add_pairs(campaign, 4)
    service.score_pairs("lev", [pair.pk for pair in pairs[:3]])
    client.force_login(researcher)
    response = client.get(reverse("scoring-show-progress", args=[campaign.slug]))
    assert response.status_code == 200
    rows = {row["metric"]: row["scored"] for row in response.context["scoring"]["metrics"]}
    assert rows == {"lev": 3, "bleu": 0}
    assert b"3 / 4" in response.content


def test_it_hides_the_panel_from_other_researchers(client, campaign):
    other = get_user_model().objects.create_user("other", password="pw-other-123", is_staff=True)
    client.force_login(other)
    assert client.get(reverse("scoring-show-progress", args=[campaign.slug])).status_code == 404


def test_it_sends_outsiders_to_the_login(client, outsider, campaign):
    client.force_login(outsider)
    assert client.get(reverse("scoring-show-progress", args=[campaign.slug])).status_code == 302
