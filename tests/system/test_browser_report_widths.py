"""Every report table fits its card in Chromium, at desktop (1280 px) and phone (390 px) widths: a table wider
than its card scrolls inside it, its last column reachable, and the page itself never scrolls sideways; the
generation preview neither."""

import pytest
from playwright.sync_api import expect

from campaigns.models import Campaign
from generation import llm
from tests.browser import STICKING_OUT, TIMEOUT_MS
from tests.factories import judge_by_gold
from tests.generation.test_generation_views import FakeTokenizer
from tests.system.test_browser_report import log_in, scored_pairs

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}

# For each report table: the box it scrolls in, its card, and whether its last column can be brought into view.
MEASURE = (
    """() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  for (const table of document.querySelectorAll("main table.report-table")) {
    const name = table.closest(".report-table-block")?.id || table.closest("section")?.id;
    const card = table.closest(".card").getBoundingClientRect();
    const box = table.closest(".table-scroll");
    if (!box) { found.push(`${name}: not in a scrolling box`); continue; }
    const inner = box.getBoundingClientRect();
    if (inner.left < card.left - 0.5 || inner.right > card.right + 0.5) {
      found.push(`${name}: its box (${inner.left}-${inner.right}) leaves its card (${card.left}-${card.right})`);
    }
    if (card.right > width + 0.5) found.push(`${name}: its card ends at ${card.right}, past the page's ${width}`);
    box.scrollLeft = box.scrollWidth;
    const cells = table.querySelectorAll("tr:first-child > :last-child");
    const last = cells[cells.length - 1].getBoundingClientRect();
    if (last.right > box.getBoundingClientRect().right + 1) {
      found.push(`${name}: its last column is cut (${last.right} past ${box.getBoundingClientRect().right})`);
    }
    box.scrollLeft = 0;
  }
  if (document.documentElement.scrollWidth > width) {
    const names = ("""
    + STICKING_OUT
    + """)(width);
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}: ${names.join(", ")}`);
  }
  return found;
}"""
)


@pytest.fixture
def two_corpora(researcher):
    campaign = Campaign.objects.create(slug="widths", name="Widths", created_by=researcher)
    pairs = scored_pairs(campaign)
    for pair in pairs[::2]:
        pair.corpus = "a corpus with a rather long name"
        pair.save()
    judge_by_gold(campaign, pairs)
    return campaign


@pytest.fixture
def one_corpus(researcher):
    campaign = Campaign.objects.create(slug="mrpc-like", name="One corpus", created_by=researcher)
    pairs = scored_pairs(campaign)
    judge_by_gold(campaign, pairs)
    return campaign


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("fixture", ["two_corpora", "one_corpus"])
def test_every_report_table_fits_its_card(live_server, browser, researcher, request, fixture, size):
    campaign = request.getfixturevalue(fixture)
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        log_in(page, live_server, researcher)
        page.goto(f"{live_server.url}/campaigns/{campaign.slug}/report/?label=human")
        assert page.locator("main table.report-table").count() > 5
        assert page.evaluate(MEASURE) == []
    finally:
        context.close()


def test_one_corpus_gets_no_global_column_repeating_it(live_server, page, researcher, one_corpus):
    # The corpus is the factories' one ("test"): a Global column would repeat it cell for cell.
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/campaigns/{one_corpus.slug}/report/?label=human")
    headers = {text.strip() for text in page.locator("main table.report-table thead th").all_inner_texts()}
    assert "test" in headers and "Global" not in headers


@pytest.mark.parametrize("size", SIZES)
def test_the_generation_preview_stays_within_the_page(live_server, browser, researcher, monkeypatch, size):
    """The template preview through a chat template: one long line (the fake tokenizer joins every turn) wraps."""
    monkeypatch.setattr(llm, "chat_tokenizer", lambda model: FakeTokenizer())
    campaign = Campaign.objects.create(slug="preview", name="Preview", created_by=researcher)
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    try:
        log_in(page, live_server, researcher)
        page.goto(f"{live_server.url}/campaigns/{campaign.slug}/templates/preview/?template=naive")
        expect(page.locator(".template-preview pre")).to_be_visible()
        assert page.evaluate(MEASURE) == []
    finally:
        context.close()
