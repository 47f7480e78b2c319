"""Researcher pages fit the campaign: list columns, a dashboard per task type, 0 % at 0 / 0, printed
metric names, plurals, and a campaign form whose slug help names the real link and follows the name."""

import re

import pytest
from django.urls import reverse

from annotation import assignment as assign
from annotation.models import Judgment
from campaigns.models import Campaign
from tests.factories import add_pairs, make_judge


def judged(campaign, answers):
    """One judge answering the campaign's real pairs in order with `answers`."""
    judge = make_judge(campaign)
    for position, (pair, answer) in enumerate(zip(campaign.real_pairs.order_by("pk"), answers, strict=False), 1):
        assign.record_judgment(judge.assignments.create(pair=pair, position=position, top="source"), answer, 900)
    return judge


def dashboard(client, researcher, campaign):
    client.force_login(researcher)
    return client.get(reverse("annotation-show-campaign", args=[campaign.slug])).content.decode()


def test_the_campaign_list_shows_task_type_pairs_judgments_and_state(client, researcher, campaign):
    add_pairs(campaign, 3)
    judged(campaign, [{"answer": "same_meaning"}, {"answer": "very_different"}])
    campaign.is_open = False
    campaign.save()
    client.force_login(researcher)
    body = client.get(reverse("campaigns-list-campaigns")).content.decode()
    row = re.search(r"<tr>\s*<td><a href=\"/campaigns/demo/\">Demo</a></td>(.*?)</tr>", body, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    assert cells[:4] == ["Similarity (5-way)", "3", "2", "closed"]


def test_the_criteria_dashboard_shows_each_criterions_mean_and_count_not_the_five_answers(client, researcher, campaign):
    campaign.task_type = "criteria"
    campaign.save()
    add_pairs(campaign, 2)
    judged(campaign, [{"adequacy": 5, "fluency": 4, "dissimilarity": 2, "overall": 3}] * 2)
    judged(campaign, [{"adequacy": 3, "fluency": 4, "dissimilarity": 4, "overall": 3}])
    body = dashboard(client, researcher, campaign)
    assert "Mean rating per criterion" in body and "Very different" not in body
    assert re.search(r"<td>Adequacy</td><td class=\"num\">4\.33 \(n = 3\)</td>", body)
    assert re.search(r"<td>Lexical dissimilarity</td><td class=\"num\">2\.67 \(n = 3\)</td>", body)


def test_the_spans_dashboard_shows_the_tagged_share(client, researcher, campaign):
    campaign.task_type = "spans"
    campaign.save()
    add_pairs(campaign, 2)  # "Source sentence number i." / "Hypothesis sentence number i.": 5 + 5 words
    judged(campaign, [{"source": [3], "hypothesis": [0, 3]}, {"source": [], "hypothesis": []}])
    body = dashboard(client, researcher, campaign)
    assert re.search(r"<td>Taggings</td><td class=\"num\">2</td>", body)
    assert re.search(r"<td>Words tagged</td><td class=\"num\">15 %</td>", body)
    assert re.search(r"<td>Taggings with nothing tagged</td><td class=\"num\">1</td>", body)


def test_plurals_follow_the_numbers(client, researcher, campaign):
    campaign.overlap_target = 1
    campaign.pairs_per_judge = 1
    campaign.save()
    add_pairs(campaign, 1)
    body = dashboard(client, researcher, campaign)
    assert "1 judgment wanted per pair" in body and "1 pair per judge" in body
    assert "pairs with 1+ judgment (0 %)" in body and ">judgments (training excluded)" in body


def test_scoring_progress_reads_zero_at_zero_pairs_and_prints_metric_names(client, researcher, campaign, settings):
    settings.PARASOL_METRICS = ["lev", "parapluie_fs_direct"]
    client.force_login(researcher)
    response = client.get(reverse("scoring-show-progress", args=[campaign.slug]))
    body = response.content.decode()
    assert [row["percent"] for row in response.context["scoring"]["metrics"]] == [0, 0]
    assert "ParaPLUIE FS-Direct" in body and ">parapluie_fs_direct<" not in body
    assert 'aria-valuenow="100"' not in body and "0 / 0" in body


def test_the_new_campaign_form_proposes_the_slug_from_the_name(client, researcher):
    client.force_login(researcher)
    page = client.get(reverse("campaigns-create-campaign")).content.decode()
    assert "/j//" not in page and "/j/spring-study/" in page and "campaign_form.js" in page
    response = client.post(
        reverse("campaigns-create-campaign"),
        {"name": "Été study 2", "slug": "", "pairs_per_judge": 10, "overlap_target": 3, "is_open": "on"},
    )
    assert response.status_code == 302
    assert Campaign.objects.get(name="Été study 2").slug == "ete-study-2"


def test_the_edit_form_names_the_campaigns_real_link(client, researcher, campaign):
    client.force_login(researcher)
    page = client.get(reverse("annotation-edit-campaign", args=[campaign.slug])).content.decode()
    assert "judges open the link /j/demo/." in page and 'class="stacked"' in page


@pytest.mark.parametrize("name", ["???", "new"])
def test_a_name_that_makes_no_usable_slug_asks_for_one(client, researcher, name):
    client.force_login(researcher)
    response = client.post(
        reverse("campaigns-create-campaign"), {"name": name, "slug": "", "pairs_per_judge": 10, "overlap_target": 3}
    )
    assert response.status_code == 200 and not Campaign.objects.filter(name=name).exists()
    assert "slug" in response.content.decode().lower()
    assert not Judgment.objects.exists()
