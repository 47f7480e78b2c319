"""Accessibility of the judge pages: an axe-core audit, keyboard-only use, a phone-sized screen."""

import json

import pytest
from playwright.sync_api import expect

from annotation.models import Judgment
from campaigns.models import Campaign
from tests.browser import SCREENSHOTS, assert_fits_width, audit, keys_wait_for_scripts
from tests.factories import add_pairs, without_controls

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def campaign_to_judge(db):
    campaign = without_controls(Campaign.objects.create(slug="a11y", name="Accessibility", pairs_per_judge=2))
    add_pairs(campaign, 2)
    campaign.pairs.filter(external_id="p1").update(source="The cat drinks water.", hypothesis="The cat drinks milk.")
    return campaign


def test_every_judge_page_passes_an_axe_audit(live_server, page, campaign_to_judge):
    page.goto(f"{live_server.url}/j/a11y/")
    found = {"welcome": audit(page)}
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    found["english level"] = audit(page)
    page.get_by_label("Good").check()
    page.get_by_role("button", name="Continue").click()
    found["guidelines"] = audit(page)
    page.get_by_role("button", name="Start the training").click()
    page.get_by_text("Guidelines and examples").click()
    found["pair"] = audit(page)
    for step in range(7):
        assignment = page.locator("#item").get_attribute("data-assignment")
        page.locator("#item button.answer").first.click()
        if step < 5:
            # A training answer: the expected answer and the why, then on.
            expect(page.locator("#item.feedback")).to_be_visible()
            if step == 0:
                found["training feedback"] = audit(page)
            page.get_by_role("link", name="Continue").click()
        if step < 6:
            expect(page.locator("#item")).not_to_have_attribute("data-assignment", assignment)
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    found["thanks"] = audit(page)
    assert {name: v for name, v in found.items() if v} == {}, json.dumps(found, indent=1)


def test_a_judge_can_answer_with_the_keyboard_alone(live_server, page, campaign_to_judge):
    page.goto(f"{live_server.url}/j/a11y/")
    page.keyboard.press("Tab")  # the skip link comes first
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.name") == "consent":
            break
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.get_by_label("Native").focus()
    page.keyboard.press("Space")
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Start the training").focus()
    page.keyboard.press("Enter")
    answer = page.locator("#item button.answer").nth(3)
    answer.focus()
    outline = answer.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline != "none", "the focused answer must show a visible focus ring"
    page.keyboard.press("Enter")
    # The training feedback takes the focus on its Continue: Enter goes on.
    expect(page.locator("#continue")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".progress")).to_contain_text("2 / 5")
    assert Judgment.objects.get().values == {"answer": "same_meaning"}


def test_the_pair_page_fits_a_phone(live_server, browser, campaign_to_judge):
    context = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2, is_mobile=True)
    page = keys_wait_for_scripts(context.new_page())
    page.goto(f"{live_server.url}/j/a11y/")
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Good").check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start the training").click()
    expect(page.locator("#item button.answer").first).to_be_visible()
    assert_fits_width(page, 360)
    for button in page.locator("#item button.answer").all():
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360 and box["height"] >= 40
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "judge-phone.png"), full_page=True)
    context.close()


def test_the_width_check_fails_on_a_page_that_scrolls_sideways_and_names_what_sticks_out(browser):
    context = browser.new_context(viewport={"width": 360, "height": 740})
    page = context.new_page()
    page.set_content('<main id="pair"><p class="too-wide" style="width: 500px">A sentence</p></main>')
    with pytest.raises(AssertionError, match=r"scrolls sideways: \d+ > 360: P\.too-wide in #pair"):
        assert_fits_width(page, 360, timeout_ms=500)
    page.set_content('<main id="pair"><p style="max-width: 100%">A sentence</p></main>')
    assert_fits_width(page, 360, timeout_ms=500)
    context.close()
