"""No key hints ("1–5", "Enter", "arrow keys") where there are no keys: every task type's welcome, guidelines and
first training pair in Chromium, on a phone (touch, mobile) and on a touch screen at desktop width, and after a
first touch on a browser that reports a mouse (the last compared with the same page before the touch, where the
hints show). On the way, no question (a fieldset's legend) has its box's border running through it."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser import TIMEOUT_MS
from tests.system.test_browser_task_types import DESKTOP, PHONE, Walk, make_campaign
from tests.toys import every_task_type

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# On a desktop the hints show: tests/system/test_browser_task_types.py checks it for every type.
CONTEXTS = {"phone": PHONE, "touch screen": {"viewport": {"width": 1280, "height": 900}, "has_touch": True}}
# Every visible element naming a key: a hint marked as such, or a key cap.
VISIBLE_HINTS = """() => [...document.querySelectorAll("main .key-hint, main kbd")]
  .filter(e => e.checkVisibility({checkVisibilityCSS: true}))  // display, visibility, a closed <details>
  .map(e => e.textContent.trim())"""

# Every element naming a key that is not folded away (a closed guidelines panel).
MARKED = """() => [...document.querySelectorAll("main .key-hint, main kbd")]
  .filter(e => !e.closest("details:not([open])")).length"""

# Questions (legends) that a box's top border runs through: on a phone a long one wraps over the border.
STRUCK_LEGENDS = """() => [...document.querySelectorAll("main fieldset > legend")]
  .filter(l => l.checkVisibility())
  .filter(l => l.getBoundingClientRect().top
    < l.parentElement.getBoundingClientRect().top + parseFloat(getComputedStyle(l.parentElement).borderTopWidth))
  .map(l => l.textContent.trim())"""


class HintWalk(Walk):
    """A walk that notes the key hints in view at each state instead of auditing it."""

    def audit(self, state):
        self.hints[state] = self.page.evaluate(VISIBLE_HINTS)
        self.marked[state] = self.page.evaluate(MARKED)
        self.struck[state] = self.page.evaluate(STRUCK_LEGENDS)


def walk_to_the_first_pair(page, task_type, live_server, touch):
    campaign = make_campaign(task_type)
    walk = HintWalk(page, task_type, phone=touch)
    walk.hints, walk.marked, walk.struck = {}, {}, {}
    walk.start(f"{live_server.url}/j/{campaign.slug}/")
    expect(page.locator(".progress")).to_contain_text("Training 1 / 5")
    walk.audit("training 1")
    return walk


@pytest.mark.parametrize("where", CONTEXTS)
@every_task_type
def test_key_hints_show_only_where_there_are_keys(live_server, browser, task_type, where):
    context = browser.new_context(**CONTEXTS[where])
    context.set_default_timeout(TIMEOUT_MS)
    try:
        walk = walk_to_the_first_pair(context.new_page(), task_type, live_server, touch=True)
    finally:
        context.close()
    assert {state: found for state, found in walk.hints.items() if found} == {}
    assert {state: found for state, found in walk.struck.items() if found} == {}


# The fallback is one rule for every type (html.touch): checked on the two types whose hints a newcomer saw on a phone.
@pytest.mark.parametrize("task_type", ["criteria", "similarity+spans"])
def test_a_first_touch_hides_the_key_hints_where_the_browser_reports_a_mouse(live_server, browser, task_type):
    context = browser.new_context(**DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        walk = walk_to_the_first_pair(page, task_type, live_server, touch=False)
        # Before the touch, every hint not folded away is in view: what the touch hides is there to hide.
        assert len(walk.hints["training 1"]) == walk.marked["training 1"] > 0
        # A touch on the page (a pointer event of type touch, as a phone reporting a mouse sends), once judge.js
        # has run (a deferred script runs before DOMContentLoaded).
        page.wait_for_load_state("domcontentloaded")
        page.evaluate(
            """() => document.querySelector("#item").dispatchEvent(
                 new PointerEvent("pointerdown", {pointerType: "touch", bubbles: true}))"""
        )
        expect(page.locator("html")).to_have_class(re.compile(r"\btouch\b"))
        assert page.evaluate(VISIBLE_HINTS) == []
        page.reload()  # the judge's next pages remember it
        expect(page.locator("#item")).to_be_visible()
        assert page.evaluate(VISIBLE_HINTS) == []
    finally:
        context.close()
