"""The training trial of every task type in Chromium, at desktop size with keys and on a touch phone: each
feedback keeps the pair on screen with the highlight the pair page showed, the explanation agrees with that
highlight (and with the reference tagging), and key hints show where there are keys and nowhere on touch."""

import re

import pytest
from playwright.sync_api import expect

from campaigns.task_types import get_task_type
from tests.annotation.explanations import claim_problems, key, speaks_of_tagging
from tests.browser import TIMEOUT_MS, keys_wait_for_scripts
from tests.factories import gives_feedback
from tests.system.test_browser_task_types import DESKTOP, PHONE, Walk, make_campaign
from tests.toys import every_task_type

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Words that speak of keys; on a touch screen none of them may be visible.
KEY_WORDS = re.compile(r"\b(keys?|keyboard|Enter|Space|arrow)\b|[↑↓]", re.I)

# Each matched element's words as [text, in yellow, tagged], skipping labels ("You:") and text for screen readers.
WORDS_JS = """selector => Array.from(document.querySelectorAll(selector)).map(root => {
  const words = [];
  const walk = (node, marked, tagged) => {
    if (node.nodeType === Node.TEXT_NODE) {
      node.textContent.split(/\\s+/).filter(Boolean).forEach(word => words.push([word, marked, tagged]));
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE || node.matches('strong, .visually-hidden')) { return; }
    const inMark = marked || node.matches('mark, .changed');
    const inTag = tagged || node.matches('.tagged');
    node.childNodes.forEach(child => walk(child, inMark, inTag));
  };
  walk(root, false, false);
  return words;
})"""

# Every visible text node of the page (the guidelines panel opened first).
VISIBLE_TEXT_JS = """() => {
  document.querySelectorAll('details').forEach(details => { details.open = true; });
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const parent = walker.currentNode.parentElement;
    if (walker.currentNode.textContent.trim() && parent.checkVisibility({visibilityProperty: true})) {
      texts.push(walker.currentNode.textContent.trim());
    }
  }
  return texts;
}"""


class TrainingWalk(Walk):
    """The walk of test_browser_task_types, without its axe-core audits (that test runs them)."""

    def audit(self, state):
        pass


def sentences(page, selector, column):
    """The sentences matched, each as its words (comparison key, flag); `column` picks the flag: 1 yellow, 2 tagged."""
    return [
        [(key(word[0]), word[column]) for word in words if key(word[0])] for words in page.evaluate(WORDS_JS, selector)
    ]


def item_highlight(page, task_type):
    selector = (
        "#item .pair .sentence" if get_task_type(task_type).shows_pair else "#item .span-sentence[data-span-words]"
    )
    return sentences(page, selector, 1)


def feedback_highlight(page, task_type):
    selector = "#item .pair .sentence" if get_task_type(task_type).shows_pair else "#item .feedback-sentence .reference"
    return sentences(page, selector, 1)


def check_key_hints(page, phone, where):
    """On touch: every key hint hidden, no visible text names a key, no outline marks what keys would rate.

    With keys: the guidelines (opened) show their key hints, and `where` (the answer controls) its own.
    """
    shown = [text for text in page.evaluate(VISIBLE_TEXT_JS) if KEY_WORDS.search(text)]
    active = page.locator("#item fieldset.criterion.active")
    if phone:
        for hint in page.locator(".key-hint").all():
            expect(hint).to_be_hidden()
        assert shown == [], shown
        if active.count():
            assert active.evaluate("e => getComputedStyle(e).boxShadow") == "none"
    else:
        assert shown, "no key hint on a page with keys"
        for hints in (page.locator(".guidelines-panel .key-hint"), page.locator(f"{where} .key-hint")):
            assert hints.count(), f"no key hint in {hints}"
            expect(hints.first).to_be_visible()
        if active.count():
            assert active.evaluate("e => getComputedStyle(e).boxShadow") != "none"


@pytest.mark.parametrize("size", ["desktop", "phone"])
@every_task_type
def test_training_feedback_keeps_the_pair_and_its_explanation_agrees(live_server, browser, task_type, size):
    phone = size == "phone"
    context = browser.new_context(**(PHONE if phone else DESKTOP))
    context.set_default_timeout(TIMEOUT_MS)
    page = keys_wait_for_scripts(context.new_page())
    campaign = make_campaign(task_type)
    # The span types show yellow only when the campaign turns it on: on, so the feedback has a highlight to keep.
    campaign.span_highlight = True
    campaign.save()
    tags_words = "source_tags" in get_task_type(task_type).answer_form.base_fields
    walk = TrainingWalk(page, task_type, phone=phone)
    walk.start(f"{live_server.url}/j/{campaign.slug}/")
    for step in range(1, 6):
        expect(page.locator(".progress")).to_contain_text(f"Training {step} / 5")
        check_key_hints(page, phone, "#item")
        seen = item_highlight(page, task_type)
        walk.answer()
        if not gives_feedback(get_task_type(task_type)):
            # Feedback is optional: a type without it moves on to the next pair.
            expect(page.locator(".progress")).not_to_contain_text(f"Training {step} / 5")
            expect(page.locator("#item.feedback")).to_have_count(0)
            continue
        expect(page.locator("#item.feedback")).to_be_visible()
        pair = page.locator("#item .pair" if get_task_type(task_type).shows_pair else "#item .feedback-sentence")
        for shown in pair.all():
            expect(shown).to_be_visible()
        assert feedback_highlight(page, task_type) == seen, "the feedback shows the highlight the pair page showed"
        explanation = page.locator("#item .explanation").inner_text().removeprefix("Why:").strip()
        reference = sentences(page, "#item .feedback-sentence .reference", 2) if tags_words else None
        assert claim_problems(explanation, seen, reference) == [], explanation
        check_key_hints(page, phone, ".guidelines-panel")
        if not tags_words:
            texts = page.evaluate(VISIBLE_TEXT_JS)
            assert not [text for text in texts if speaks_of_tagging(text)], "tagging words on a type without tagging"
        if phone:
            page.get_by_role("link", name="Continue").tap()
        else:
            page.keyboard.press("Enter")
    expect(page.locator(".progress")).not_to_contain_text("Training")
    context.close()
