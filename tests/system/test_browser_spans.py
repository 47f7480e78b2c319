"""A judge walks a span-tagging campaign in Chromium: mouse, drag, keyboard, "Nothing to tag", reference feedback."""

import json

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from annotation.models import Judgment
from campaigns.models import Campaign
from tests.browser import SCREENSHOTS, TIMEOUT_MS, assert_fits_width, keys_wait_for_scripts, ready
from tests.factories import add_pairs, without_controls
from tests.system.test_browser_accessibility import audit
from tests.system.test_browser_task_types import DESKTOP, PHONE, Walk, make_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def spans_campaign(db):
    campaign = Campaign.objects.create(slug="tagwalk", name="Tagging", pairs_per_judge=2, task_type="spans")
    add_pairs(campaign, 2)
    return without_controls(campaign)


def join(page, url, scripts=True):
    page.goto(f"{url}/j/tagwalk/")
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Good").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text("no counterpart").first).to_be_visible()
    page.get_by_role("button", name="Start the training").click()
    expect(page.locator("#item")).to_be_visible()
    if scripts:
        ready(page)  # the words are tagged by judge.js's handlers: none before it ran


def words(page):
    return page.locator("#item button.word")


def remember(expected, page, buttons):
    """Note which (side, index) the judge tagged on the pair shown now."""
    pair = page.locator("#item").get_attribute("data-assignment")
    tags = expected.setdefault(pair, {"source": [], "hypothesis": []})
    for button in buttons:
        side = button.get_attribute("data-field").removesuffix("_tags")
        tags[side].append(int(button.get_attribute("data-index")))


def continue_after_feedback(page):
    expect(page.get_by_role("heading", name="Training: the expected answer and yours")).to_be_visible()
    page.get_by_role("link", name="Continue").click()
    expect(page.get_by_role("heading", name="Training: the expected answer and yours")).to_have_count(0)
    ready(page)


def test_a_judge_tags_by_mouse_drag_and_keyboard_and_the_export_holds_those_tags(
    live_server, page, spans_campaign, tmp_path
):
    join(page, live_server.url)
    expected = {}
    found = {"span page": audit(page)}

    # Training 1, by mouse: one click tags, the style is not the diff's yellow.
    first = words(page).nth(1)
    first.click()
    expect(first).to_have_attribute("aria-pressed", "true")
    assert first.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(0, 68, 136)"
    remember(expected, page, [first])
    page.get_by_role("button", name="Submit").click()
    found["feedback"] = audit(page)
    continue_after_feedback(page)

    # Training 2, by keyboard: arrows move, Space toggles, Enter submits.
    words(page).first.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    tagged = words(page).nth(2)
    expect(tagged).to_have_attribute("aria-pressed", "true")
    remember(expected, page, [tagged])
    page.keyboard.press("Enter")
    continue_after_feedback(page)

    # Training 3: Nothing to tag.
    remember(expected, page, [])
    page.get_by_role("button", name="Nothing to tag").click()
    continue_after_feedback(page)

    # Training 4: a drag across three words tags the run.
    start, end = words(page).nth(0).bounding_box(), words(page).nth(2).bounding_box()
    page.mouse.move(start["x"] + start["width"] / 2, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)
    page.mouse.up()
    expect(page.locator("#item button.word[aria-pressed=true]")).to_have_count(3)
    remember(expected, page, [words(page).nth(i) for i in range(3)])
    page.get_by_role("button", name="Submit").click()
    continue_after_feedback(page)

    # Training 5: submitting nothing asks first; a second Submit confirms the empty tagging.
    remember(expected, page, [])
    page.get_by_role("button", name="Submit").click()
    expect(page.locator(".span-confirm")).to_contain_text("No word is tagged")
    assert Judgment.objects.count() == 4
    page.get_by_role("button", name="Submit").click()
    continue_after_feedback(page)

    # Real pairs: no feedback, the next pair comes at once.
    expect(page.locator(".progress")).to_contain_text("1 / 2")
    last = words(page).last
    last.click()
    remember(expected, page, [last])
    page.get_by_role("button", name="Submit").click()
    expect(page.locator(".progress")).to_contain_text("2 / 2")
    remember(expected, page, [])
    page.get_by_role("button", name="Nothing to tag").click()
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()

    out = tmp_path / "taggings.jsonl"
    call_command("export_pairs", "tagwalk", "--spans", "--out", str(out))
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    by_assignment = dict(Judgment.objects.values_list("pair__external_id", "assignment_id"))
    assert len(exported) == 7
    for line in exported:
        tags = expected[str(by_assignment[line["pair_id"]])]
        for side in ("source", "hypothesis"):
            assert line[f"{side}_tags"] == [int(i in tags[side]) for i in range(len(line[f"{side}_tokens"]))], line
    assert {name: v for name, v in found.items() if v} == {}, json.dumps(found, indent=1)


def test_the_span_page_fits_a_phone(live_server, browser, spans_campaign):
    context = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2, is_mobile=True)
    page = keys_wait_for_scripts(context.new_page())
    join(page, live_server.url)
    expect(words(page).first).to_be_visible()
    assert_fits_width(page, 360)
    for button in words(page).all() + page.locator(".span-actions button").all():
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 360
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "spans-phone.png"), full_page=True)
    context.close()


def test_the_span_page_works_without_javascript(live_server, browser, spans_campaign):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    join(page, live_server.url, scripts=False)
    boxes = page.locator("#item input[type=checkbox]")
    expect(boxes.first).to_be_visible()
    boxes.nth(1).check()
    page.get_by_role("button", name="Submit").click()
    expect(page.get_by_role("heading", name="Training: the expected answer and yours")).to_be_visible()
    judgment = Judgment.objects.get()
    assert sum(len(indexes) for indexes in judgment.values.values()) == 1
    context.close()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_similarity_spans_asks_in_words_for_the_five_way_answer_that_comes_first(live_server, browser, size):
    phone = size == "phone"
    context = browser.new_context(**(PHONE if phone else DESKTOP))
    context.set_default_timeout(TIMEOUT_MS)
    page = keys_wait_for_scripts(context.new_page())
    campaign = make_campaign("similarity+spans")
    walk = Walk(page, campaign.task_type, phone=phone)
    walk.start(f"{live_server.url}/j/{campaign.slug}/")
    walk.check_item("training 1")  # the item is on show and judge.js has taken it over
    nothing = page.locator("#item button.span-nothing")
    nothing.tap() if phone else nothing.click()
    expect(page.locator("#item .five-way-missing")).to_have_text(
        "First choose how close the meanings are (one of the five answers), then tag the words or choose "
        "“Nothing to tag”."
    )
    walk.audit("missing answer")
    context.close()
    assert not Judgment.objects.exists()
    assert {state: v for state, v in walk.found.items() if v} == {}, json.dumps(walk.found, indent=1)
