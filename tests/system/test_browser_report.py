"""The report page in Chromium: the reader's words only, empty sections explained, axe-clean, printable."""

import json
import re

import pytest
from django.test import Client

from annotation.tasktypes.similarity.scale import ANSWERS
from campaigns.models import Campaign, Score
from metrics.registry import METRICS
from reports.analysis import TABLE_NAMES
from reports.analysis.agreement import STATISTIC_TITLES
from reports.analysis.vocabulary import COLUMN_TITLES
from tests.browser import SCREENSHOTS
from tests.factories import add_pairs, judge_by_gold
from tests.system.test_browser_accessibility import audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Every internal name the registries define; none may reach the reader.
INTERNAL_NAMES = {
    *METRICS,
    *ANSWERS,
    *STATISTIC_TITLES,
    *(name for name in COLUMN_TITLES if "_" in name),
    "non_paraphrase",
}
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def scored_pairs(campaign, n=16):
    """Pairs half paraphrases, with scores that separate them imperfectly (so the tables have something to bold)."""
    pairs = add_pairs(campaign, n)
    for i, pair in enumerate(pairs):
        gold = int(i >= n // 2)
        pair.gold_label = gold
        pair.save()
        scores = {
            "bleu": (i * 7 % n) / n + 0.3 * gold,
            "lev": 1 - (i * 5 % n) / n - 0.2 * gold,
            "parapluie_direct": (i * 3 % n) / 4 - 2.5 + 2 * gold,
        }
        for metric, value in scores.items():
            Score.objects.create(pair=pair, metric=metric, signature=f"metric:{metric}|version:1", value=value)
    return pairs


@pytest.fixture
def judged(researcher):
    campaign = Campaign.objects.create(slug="judged", name="Judged", created_by=researcher)
    pairs = scored_pairs(campaign)
    judge_by_gold(campaign, pairs)
    return campaign


@pytest.fixture
def gold_only(researcher):
    campaign = Campaign.objects.create(slug="gold-only", name="Gold only", created_by=researcher)
    scored_pairs(campaign)
    return campaign


def log_in(page, live_server, researcher):
    client = Client()
    client.force_login(researcher)
    page.context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )


def reader_text(page):
    """The visible text of the report, without the signatures (an implementation's own identifiers)."""
    text = page.locator("main").inner_text()
    for signature in page.locator(".signature").all_inner_texts():
        text = text.replace(signature, "")
    return text


def raw_column_names():
    """Header names a DataFrame dump would show: the tidy tables' columns and index names."""
    return {"metric", "corpus", "label", "row", "column", "statistic", "answer", "threshold_kind", "rate"}


def check_page(page):
    text = reader_text(page)
    leaked = {name for name in INTERNAL_NAMES if re.search(rf"\b{re.escape(name)}\b", text)}
    assert leaked == set(), leaked
    assert SNAKE_CASE.findall(text) == []
    headers = {h.strip() for h in page.locator("main th").all_inner_texts()}
    assert headers & raw_column_names() == set()
    assert headers & set(TABLE_NAMES) == set()


def test_a_report_with_human_labels_reads_like_the_paper(live_server, page, researcher, judged):
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/campaigns/judged/report/?label=human")
    check_page(page)
    assert "Krippendorff's α (ordinal)" in reader_text(page) and "Table 3" in reader_text(page)
    assert page.locator("#report-classification table.report-table strong").count() > 0
    for link in page.locator("nav.report-toc a").all():
        assert page.locator(link.get_attribute("href")).count() == 1
    assert audit(page) == [], json.dumps(audit(page), indent=1)
    table3 = page.locator("#table-table3")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    table3.screenshot(path=str(SCREENSHOTS / "report-table3.png"))
    page.emulate_media(media="print")
    assert not page.locator("header.topbar").is_visible() and not page.locator("nav.report-toc").is_visible()
    assert page.locator("#table-table3").evaluate("e => getComputedStyle(e).breakInside") == "avoid"


def test_a_gold_only_report_explains_each_empty_section_in_one_line(live_server, page, researcher, gold_only):
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/campaigns/gold-only/report/?label=gold")
    check_page(page)
    reasons = {
        "judges": "No judgments yet: the judges' answers appear once judges have labelled pairs.",
        "agreement": "No judgments yet: agreement appears once two judges share a pair.",
    }
    for slug, reason in reasons.items():
        section = page.locator(f"#report-{slug}")
        assert section.locator(".empty-reason").inner_text() == reason
        assert section.locator("table").count() == 0
    # Table 3, the EER and the AUC (the AUC's tests of every two metrics are a download).
    assert page.locator("#report-classification table.report-table").count() == 3
    assert audit(page) == [], json.dumps(audit(page), indent=1)
