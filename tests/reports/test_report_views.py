from urllib.parse import urlencode

import pytest
from django.core.cache import cache
from django.urls import reverse

from campaigns.models import Campaign, Score
from reports.cache import get_report
from tests.factories import add_pairs, judge_by_gold
from tests.reports.test_report_command import assert_self_contained


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
    judge_by_gold(campaign, pairs)
    return campaign


def report_urls():
    query = "?c=demo&label=gold"
    return [
        reverse("reports-show-report", args=["demo"]),
        reverse("reports-show-cross-report") + query,
        reverse("reports-download-report-table", args=["table3"]) + query,
        reverse("reports-show-report-figure", args=["figure2", "png"]) + query,
        reverse("reports-download-report-latex", args=["table3"]) + query,
        reverse("reports-download-report-html") + query,
    ]


@pytest.mark.parametrize("index", range(6))
def test_anonymous_users_and_outsiders_are_sent_to_login(client, campaign, outsider, index):
    url = report_urls()[index]
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response.url
    client.force_login(outsider)
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response.url


def test_the_page_shows_the_tables_and_figures(client, judged_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("reports-show-report", args=["demo"]) + "?label=human")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Table 3" in body and "Table 1" in body and 'hx-trigger="every 20s"' in body
    assert "metric:bleu|version:1" in body
    assert reverse("reports-show-report-figure", args=["figure2", "png"]) in body


def test_an_htmx_request_gets_the_body_partial_only(client, judged_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("reports-show-report", args=["demo"]), headers={"HX-Request": "true"})
    body = response.content.decode()
    assert response.status_code == 200 and 'id="report-status"' in body and "<html" not in body


def test_the_cross_campaign_page_puts_corpora_side_by_side(client, judged_campaign, researcher):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    add_pairs(other, 3, corpus="second")
    client.force_login(researcher)
    response = client.get(reverse("reports-show-cross-report") + "?c=demo&c=other&label=gold")
    body = response.content.decode()
    assert response.status_code == 200 and "second" in body and "test" in body


def test_it_answers_404_for_an_unknown_campaign_or_label_source(client, judged_campaign, researcher):
    client.force_login(researcher)
    assert client.get(reverse("reports-show-cross-report") + "?c=demo&c=nope").status_code == 404
    assert client.get(reverse("reports-show-report", args=["demo"]) + "?label=majority").status_code == 404
    assert client.get(reverse("reports-download-report-table", args=["nope"]) + "?c=demo").status_code == 404


def test_it_downloads_a_table_as_csv(client, judged_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("reports-download-report-table", args=["table3"]) + "?c=demo&label=gold")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert 'filename="demo-gold-table3.csv"' in response["Content-Disposition"]
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("metric,corpus,threshold_kind,threshold,accuracy,f1,recall,precision")
    assert any(line.startswith("bleu,test,a_posteriori,0.4,1.0") for line in lines)


def test_the_csv_with_notes_opens_with_comments_naming_the_columns(client, judged_campaign, researcher):
    client.force_login(researcher)
    url = reverse("reports-download-report-table", args=["table3"]) + "?c=demo&label=gold"
    plain, annotated = client.get(url).content.decode(), client.get(url + "&comments=1").content.decode()
    comments = [line for line in annotated.splitlines() if line.startswith("#")]
    assert comments[0].startswith("# Table 3") and "# column f1: F1" in comments
    assert annotated.endswith(plain) and not plain.startswith("#")


def test_a_hostile_comments_parameter_gets_the_plain_csv(client, judged_campaign, researcher):
    client.force_login(researcher)
    url = reverse("reports-download-report-table", args=["table3"]) + "?c=demo&label=gold"
    plain = client.get(url).content
    for value in ("0", "yes", "1" * 5000, "1'; --"):
        response = client.get(f"{url}&{urlencode({'comments': value})}")
        assert response.status_code == 200 and response.content == plain, value
    # A NUL in any query is refused naming it (issue 25: parasol.middleware.NulCharacterMiddleware).
    response = client.get(f"{url}&{urlencode({'comments': chr(0)})}")
    assert response.status_code == 400 and "NUL character" in response.content.decode()


def test_it_serves_figures_as_png_and_svg(client, judged_campaign, researcher):
    client.force_login(researcher)
    png = client.get(reverse("reports-show-report-figure", args=["figure2", "png"]) + "?c=demo")
    svg = client.get(reverse("reports-show-report-figure", args=["ranks-1", "svg"]) + "?c=demo&download=1")
    assert png.status_code == 200 and png["Content-Type"] == "image/png" and png.content.startswith(b"\x89PNG")
    assert (
        svg.status_code == 200 and svg["Content-Type"] == "image/svg+xml" and "attachment" in svg["Content-Disposition"]
    )


def test_figure_2_is_drawn_for_each_corpus_too(client, judged_campaign, researcher):
    client.force_login(researcher)
    page = client.get(reverse("reports-show-report", args=["demo"])).content.decode()
    assert "Figure 2 — scores against the edit distance — test" in page
    png = client.get(reverse("reports-show-report-figure", args=["figure2-1", "png"]) + "?c=demo")
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")


def test_the_report_is_recomputed_only_when_the_data_changes(judged_campaign):
    first = get_report([judged_campaign], "gold")
    assert get_report([judged_campaign], "gold").computed_at == first.computed_at
    Score.objects.create(
        pair=judged_campaign.real_pairs.first(), metric="bleu", signature="metric:bleu|version:2", value=0.5
    )
    changed = get_report([judged_campaign], "gold")
    assert changed.key != first.key
    assert changed.signatures["bleu"] == "metric:bleu|version:2"
    assert any("BLEU: using the most recent signature metric:bleu|version:2" in note for note in changed.report.notes)


def test_a_gold_only_campaign_shows_each_empty_section_as_one_line(client, campaign, researcher):
    pairs = add_pairs(campaign, 6)
    for i, pair in enumerate(pairs):
        pair.gold_label = i % 2
        pair.save()
        Score.objects.create(pair=pair, metric="bleu", signature="metric:bleu|version:1", value=i / 10)
    client.force_login(researcher)
    body = client.get(reverse("reports-show-report", args=["demo"]) + "?label=gold").content.decode()
    assert "No judgments yet: agreement appears once two judges share a pair." in body
    assert "No judgments yet: the judges&#x27; answers appear" in body
    assert "Krippendorff" not in body and "0 (–%)" not in body
    assert 'href="#report-classification"' in body and 'id="report-classification"' in body
    assert "Table 3" in body and "<strong>" in body


def test_the_human_label_page_has_a_contents_list_linking_every_section(client, judged_campaign, researcher):
    client.force_login(researcher)
    body = client.get(reverse("reports-show-report", args=["demo"]) + "?label=human").content.decode()
    for slug in ("corpora", "judges", "agreement", "scores", "classification", "figures"):
        assert f'href="#report-{slug}"' in body and f'id="report-{slug}"' in body
    assert "Krippendorff&#x27;s α (ordinal)" in body and "krippendorff_alpha_ordinal" not in body


def test_it_downloads_a_table_as_latex_and_the_report_as_one_html_file(client, judged_campaign, researcher):
    client.force_login(researcher)
    tex = client.get(reverse("reports-download-report-latex", args=["auc"]) + "?c=demo&label=gold")
    assert tex.status_code == 200 and 'filename="demo-gold-auc.tex"' in tex["Content-Disposition"]
    assert "\\begin{tabular}" in tex.content.decode() and "\\toprule" in tex.content.decode()
    page = client.get(reverse("reports-download-report-html") + "?c=demo&label=human")
    assert page.status_code == 200 and "attachment" in page["Content-Disposition"]
    body = page.content.decode()
    assert_self_contained(body)
    assert "data:image/png;base64," in body and "Appendix B: protocol and analysis settings" in body
    assert client.get(reverse("reports-download-report-latex", args=["nope"]) + "?c=demo").status_code == 404


def test_the_latex_of_an_empty_table_is_a_404_naming_it(client, campaign, researcher):
    add_pairs(campaign, 3)
    client.force_login(researcher)
    response = client.get(reverse("reports-download-report-latex", args=["agreement"]) + "?c=demo")
    assert response.status_code == 404


def test_without_a_label_source_the_page_reads_what_the_data_has(client, campaign, researcher):
    pairs = add_pairs(campaign, 4)
    for i, pair in enumerate(pairs):
        pair.gold_label = i % 2
        pair.save()
    client.force_login(researcher)
    body = client.get(reverse("reports-show-report", args=["demo"])).content.decode()
    assert "the corpus's gold labels" in body and "Judges&#x27; majority labels (none yet)" in body
