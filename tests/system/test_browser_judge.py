"""A judge walks the whole protocol in a real headless Chromium (Playwright)."""

import pytest
from django.db.models.fields.json import KT
from playwright.sync_api import expect

from annotation.models import Judge, Judgment
from tests.factories import add_pairs, without_controls

GREY = "rgb(224, 224, 224)"
LIGHT_BLUE = "rgb(173, 216, 230)"
YELLOW = "rgb(255, 235, 59)"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_judge_completes_the_protocol_in_a_browser(live_server, page, researcher):
    from campaigns.models import Campaign

    campaign = without_controls(Campaign.objects.create(slug="walk", name="Walkthrough", pairs_per_judge=3))
    add_pairs(campaign, 3)
    campaign.pairs.filter(external_id="p1").update(source="The cat drinks water.", hypothesis="The cat drinks milk.")

    page.goto(f"{live_server.url}/j/walk/")
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()

    # English level is required: submitting without it keeps us on the page.
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("alert")).to_contain_text("English level")
    page.get_by_label("Advanced").check()
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_role("heading", name="Guidelines")).to_be_visible()
    expect(page.locator(".example")).to_have_count(5)
    page.get_by_role("button", name="Start the training").click()

    buttons = page.locator("#item button.answer")
    expect(buttons).to_have_count(5)
    names = [text.split(" ", 1)[1].strip() for text in buttons.all_inner_texts()]
    assert names == ["Very different", "Slightly similar", "Mostly similar", "Same meaning", "Don't know"]
    colours = [b.evaluate("e => getComputedStyle(e).backgroundColor") for b in buttons.all()]
    assert colours == [GREY, GREY, GREY, GREY, LIGHT_BLUE]

    # The guidelines stay reachable while judging.
    page.get_by_text("Guidelines and examples").click()
    expect(page.locator(".guidelines-panel .example").first).to_be_visible()
    page.get_by_text("Guidelines and examples").click()

    for step in range(1, 6):
        expect(page.locator(".progress")).to_contain_text(f"Training {step} / 5")
        if step % 2:
            page.keyboard.press("4")  # keys 1-5 answer too
        else:
            page.locator("#item button.answer", has_text="Mostly similar").click()
        expect(page.locator("#item .explanation")).to_be_visible()
        page.get_by_role("link", name="Continue").click()
        expect(page.locator(".progress")).not_to_contain_text(f"{step} / 5")

    seen_highlight = False
    for step in range(1, 4):
        expect(page.locator(".progress")).to_contain_text(f"{step} / 3")
        sentences = page.locator("#item .sentence").all_inner_texts()
        if "The cat drinks water." in sentences:
            marks = page.locator("#item mark")
            assert sorted(marks.all_inner_texts()) == ["milk.", "water."]
            assert marks.first.evaluate("e => getComputedStyle(e).backgroundColor") == YELLOW
            seen_highlight = True
        page.locator("#item button.answer", has_text="Same meaning").click()

    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert seen_highlight

    judge = Judge.objects.get(campaign=campaign)
    assert judge.english_level == "advanced" and judge.finished_at is not None
    judgments = Judgment.objects.filter(judge=judge)
    assert judgments.filter(is_training=True).count() == 5
    real = judgments.filter(is_training=False)
    assert real.count() == 3
    assert set(real.values_list(KT("values__answer"), flat=True)) == {"same_meaning"}
    assert all(ms is not None and 0 < ms < 60_000 for ms in judgments.values_list("response_ms", flat=True))
    training = judgments.filter(is_training=True).values_list(KT("values__answer"), flat=True)
    assert set(training) == {"same_meaning", "mostly_similar"}


def test_the_judge_page_works_without_javascript(live_server, browser):
    from campaigns.models import Campaign

    campaign = without_controls(Campaign.objects.create(slug="nojs", name="No JS", pairs_per_judge=1))
    add_pairs(campaign, 1)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/j/nojs/")
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Native").check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start the training").click()
    for step in range(6):
        page.locator("#item button.answer", has_text="Slightly similar").click()
        if step < 5:
            expect(page.locator("#item .explanation")).to_be_visible()
            page.get_by_role("link", name="Continue").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    context.close()
    assert Judgment.objects.filter(pair__campaign=campaign, is_training=False).count() == 1


def test_similarity_spans_without_javascript_asks_for_the_missing_answer_in_words(live_server, browser):
    from campaigns.models import Campaign

    campaign = Campaign.objects.create(slug="nojs-spans", name="No JS", pairs_per_judge=1, task_type="similarity+spans")
    add_pairs(without_controls(campaign), 1)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{live_server.url}/j/nojs-spans/")
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Native").check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start the training").click()
    page.get_by_role("button", name="Nothing to tag").click()
    expect(page.get_by_role("alert")).to_contain_text("First choose how close the meanings are")
    page.get_by_label("Same meaning").check()
    page.get_by_role("button", name="Nothing to tag").click()
    expect(page.locator("#item .explanation")).to_be_visible()
    context.close()
    assert Judgment.objects.filter(pair__campaign=campaign, is_training=True).count() == 1
