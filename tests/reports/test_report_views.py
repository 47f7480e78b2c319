import pytest
from django.core.cache import cache
from django.urls import reverse

from annotation.models import Assignment, Judgment
from campaigns.models import Campaign
from reports.cache import get_report
from scoring.models import Score
from tests.factories import add_pairs, make_judge


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


@pytest.fixture
def judged_campaign(campaign):
    pairs = add_pairs(campaign, 8)
    for i, pair in enumerate(pairs):
        pair.gold_label = int(i >= 4)
        pair.save()
        Score.objects.create(pair=pair, metric="bleu", signature="metric:bleu|version:1", value=i / 10)
        Score.objects.create(pair=pair, metric="lev", signature="metric:lev|version:1", value=1 - i / 10)
    for level in ("good", "native"):
        judge = make_judge(campaign, level=level)
        for position, pair in enumerate(pairs, start=1):
            assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
            label = "same_meaning" if pair.gold_label else "very_different"
            Judgment.objects.create(assignment=assignment, judge=judge, pair=pair, label=label)
    return campaign


def report_urls():
    query = "?c=demo&label=gold"
    return [
        reverse("campaigns-show-report", args=["demo"]),
        reverse("campaigns-show-cross-report") + query,
        reverse("campaigns-download-report-table", args=["table3"]) + query,
        reverse("campaigns-show-report-figure", args=["figure2", "png"]) + query,
    ]


@pytest.mark.parametrize("index", range(4))
def test_anonymous_users_and_outsiders_are_sent_to_login(client, campaign, outsider, index):
    url = report_urls()[index]
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response.url
    client.force_login(outsider)
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_the_page_shows_the_tables_and_figures(client, judged_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("campaigns-show-report", args=["demo"]) + "?label=human")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Table 3" in body and "Table 1" in body and 'hx-trigger="every 20s"' in body
    assert "metric:bleu|version:1" in body
    assert reverse("campaigns-show-report-figure", args=["figure2", "png"]) in body


def test_an_htmx_request_gets_the_body_partial_only(client, judged_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("campaigns-show-report", args=["demo"]), headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and 'id="report-status"' in body and "<html" not in body


def test_the_cross_campaign_page_puts_corpora_side_by_side(client, judged_campaign, researcher):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    add_pairs(other, 3, corpus="second")
    client.force_login(researcher)
    response = client.get(reverse("campaigns-show-cross-report") + "?c=demo&c=other&label=gold")
    body = response.content.decode()
    assert response.status_code == 200 and "second" in body and "test" in body


def test_it_answers_404_for_an_unknown_campaign_or_label_source(client, judged_campaign, researcher):
    client.force_login(researcher)
    assert client.get(reverse("campaigns-show-cross-report") + "?c=demo&c=nope").status_code == 404
    assert client.get(reverse("campaigns-show-report", args=["demo"]) + "?label=majority").status_code == 404
    assert client.get(reverse("campaigns-download-report-table", args=["nope"]) + "?c=demo").status_code == 404


def test_it_downloads_a_table_as_csv(client, judged_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("campaigns-download-report-table", args=["table3"]) + "?c=demo&label=gold")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="demo-gold-table3.csv"' in response["Content-Disposition"]
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("metric,corpus,threshold_kind,threshold,accuracy,f1,recall,precision")
    assert any(line.startswith("bleu,test,a_posteriori,0.4,1.0") for line in lines)


def test_it_serves_figures_as_png_and_svg(client, judged_campaign, researcher):
    client.force_login(researcher)
    png = client.get(reverse("campaigns-show-report-figure", args=["figure2", "png"]) + "?c=demo")
    svg = client.get(reverse("campaigns-show-report-figure", args=["ranks-1", "svg"]) + "?c=demo&download=1")
    assert png.status_code == 200 and png["Content-Type"] == "image/png" and png.content.startswith(b"\x89PNG")
    assert (
        svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml" and "attachment" in svg["Content-Disposition"]
    )


def test_the_report_is_recomputed_only_when_the_data_changes(judged_campaign):
    first = get_report([judged_campaign], "gold")
    assert get_report([judged_campaign], "gold").computed_at == first.computed_at
    Score.objects.create(
        pair=judged_campaign.real_pairs.first(), metric="bleu", signature="metric:bleu|version:2", value=0.5
    )
    changed = get_report([judged_campaign], "gold")
    assert changed.key != first.key
    assert changed.signatures["bleu"] == "metric:bleu|version:2"
    assert any("bleu: using the most recent signature metric:bleu|version:2" in note for note in changed.report.notes)
