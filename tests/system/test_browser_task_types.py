"""Every task type walked in Chromium, consent to the last pair, at desktop size with the keyboard and at
phone size with taps: the welcome fits the task, a type whose questions name roles shows the labelled source
first, every training answer shows the feedback its type gives (an expected answer, a reference tagging, a
why; none for a type without feedback), the feedback keeps the pair on screen with the highlight the pair
page showed and its explanation agrees with that highlight (and with the reference tagging), key hints show
where there are keys and nowhere on touch, and axe-core finds nothing on any kind of page state. Every
registered type and the toy (`tests.toys`) are walked; each answers with its `example_answer`, through its
own controls."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Judgment
from campaigns.models import Campaign
from campaigns.task_types import get_task_type
from tests.annotation.explanations import claim_problems, key, speaks_of_tagging
from tests.browser import SCREENSHOTS, TIMEOUT_MS, assert_fits_width, audit, keys_wait_for_scripts
from tests.factories import without_controls
from tests.toys import every_task_type

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 3}
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

PAIRS = [
    ("The library opens at nine on weekdays.", "On weekdays the library opens at nine in the morning."),
    ("Maria sent the parcel to her brother.", "Maria's brother received a letter from the bank."),
]


@pytest.fixture
def phone_page(browser):
    context = browser.new_context(**PHONE)
    context.set_default_timeout(TIMEOUT_MS)
    yield keys_wait_for_scripts(context.new_page())
    context.close()


@pytest.fixture
def desktop_page(browser):
    context = browser.new_context(**DESKTOP)
    context.set_default_timeout(TIMEOUT_MS)
    yield keys_wait_for_scripts(context.new_page())
    context.close()


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


def make_campaign(task_type):
    slug = task_type.replace("+", "-")
    campaign = Campaign.objects.create(slug=slug, name=f"Walk {task_type}", pairs_per_judge=2, task_type=task_type)
    without_controls(campaign)
    for i, (source, hypothesis) in enumerate(PAIRS, start=1):
        campaign.pairs.create(external_id=f"p{i}", source=source, hypothesis=hypothesis)
    return campaign


class Walk:
    """One judge's walk; `found` collects axe-core's violations per page state."""

    def __init__(self, page, task_type, phone):
        self.page, self.task_type, self.phone = page, task_type, phone
        self.found = {}

    def audit(self, state):
        # Each kind of page state is audited on its first two pairs: the later training pairs and their
        # feedback are the same template again (an audit costs about a second of Chromium's time).
        kind, _, number = state.rpartition(" ")
        if not (kind and number.isdigit() and int(number) > 2):
            self.found[state] = audit(self.page)
        if state in ("training 2", "feedback 2", "missing answer"):
            # For docs/judges.md (docs/img holds the copies it shows).
            name = f"judge-{self.task_type.replace('+', '-')}-{'phone' if self.phone else 'desktop'}"
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            # A full-page capture drops Chromium's mobile emulation (touch media queries): the phone's viewport only.
            path = str(SCREENSHOTS / f"{name}-{state.replace(' ', '-')}.png")
            self.page.screenshot(path=path, full_page=not self.phone)

    def press_or_tap(self, locator):
        if self.phone:
            locator.tap()
        else:
            locator.focus()
            self.page.keyboard.press("Enter" if locator.evaluate("e => e.tagName") in ("BUTTON", "A") else "Space")

    def start(self, url):
        page = self.page
        page.goto(url)
        intro = str(get_task_type(self.task_type).introduction)
        expect(page.locator(".card")).to_contain_text(intro)
        expect(page.locator(".plan")).to_contain_text("then up to 2 pairs")
        self.audit("welcome")
        self.press_or_tap(page.get_by_label("I agree"))
        self.press_or_tap(page.get_by_role("button", name="Start"))
        expect(page.get_by_role("heading", name="Your English")).to_be_visible()
        self.audit("english level")
        self.press_or_tap(page.get_by_label("Advanced"))
        self.press_or_tap(page.get_by_role("button", name="Continue"))
        expect(page.get_by_role("heading", name="Guidelines")).to_be_visible()
        self.audit("guidelines")
        self.press_or_tap(page.get_by_role("button", name="Start the training"))

    def check_item(self, state):
        page = self.page
        item = page.locator("#item")
        expect(item).to_have_attribute("data-assignment", re.compile(r"^\d+$"))
        assignment = Assignment.objects.select_related("pair").get(pk=item.get_attribute("data-assignment"))
        if get_task_type(self.task_type).source_first:
            # Questions that name a role: the source first, each sentence labelled, no "first" or "top".
            expect(page.locator("#item .sentence-role")).to_have_text(["Original", "Paraphrase"])
            expect(page.locator("#sentence-top")).to_have_text(assignment.pair.source)
            for legend in page.locator("#item legend").all_inner_texts():
                assert not any(word in legend.lower().split() for word in ("first", "second", "top", "bottom"))
        if self.phone:
            self.check_phone_layout()
        self.audit(state)
        return assignment

    def check_phone_layout(self):
        page = self.page
        assert_fits_width(page, 390)
        language = page.locator("#language")
        assert language.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the language name is cut"
        assert language.evaluate("e => e.options[e.selectedIndex].text") == "English"
        for hint in page.locator("#item .key-hint").all():
            expect(hint).to_be_hidden()
        for control in page.locator("#item button.answer, #item label.answer-choice, #item label.rating").all():
            box = control.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 40, box

    def answer(self):
        """Answer the pair on show with the task type's example answer, through its controls: keys or taps.

        Each field of `TaskType.example_answer` names a control (`[name=field][value=value]`); a submit
        button among them sends the answer, else the form's own submit button does.
        """
        page = self.page
        sent = False
        for name, value in get_task_type(self.task_type).example_answer().items():
            control = page.locator(f'#item [name="{name}"][value="{value}"]')
            expect(control).to_have_count(1)
            sent = control.get_attribute("type") == "submit"
            self.press_or_tap(control)
            if not sent:
                expect(control).to_be_checked()
        if not sent:
            self.press_or_tap(page.locator("#item form [type=submit]:not([name])"))

    def check_feedback(self, state, assignment, seen):
        """The feedback the task type gives this training answer (optional: none, and the walk moves on).

        `seen`: the pair page's highlight, which the feedback keeps and its explanation speaks of.
        """
        page = self.page
        # The answer is stored once the page shows what follows it: the feedback, or the next pair.
        expect(page.locator(f'#item.feedback, #item:not([data-assignment="{assignment.pk}"])')).to_have_count(1)
        judgment = Judgment.objects.select_related("pair", "judge__campaign", "assignment").get(assignment=assignment)
        task_type = get_task_type(self.task_type)
        feedback = task_type.feedback(judgment)
        if feedback is None:
            expect(page.locator("#item")).not_to_have_attribute("data-assignment", str(assignment.pk))
            expect(page.locator("#item.feedback")).to_have_count(0)
            return
        expect(page.locator("#item.feedback")).to_be_visible()
        if feedback.get("feedback_sides"):
            expect(page.locator("#item .feedback-sentence")).to_have_count(len(feedback["feedback_sides"]))
        if feedback.get("feedback_rows"):
            first = page.locator("#item td.expected").first
            expect(first).not_to_have_text("—")
            expect(page.locator("#item td.yours").first).not_to_be_empty()
        if feedback.get("explanation"):
            expect(page.locator("#item .explanation")).to_contain_text("Why:")
        pair = page.locator("#item .pair" if task_type.shows_pair else "#item .feedback-sentence")
        for shown in pair.all():
            expect(shown).to_be_visible()
        assert feedback_highlight(page, self.task_type) == seen, "the feedback shows the highlight the pair page showed"
        tags_words = "source_tags" in task_type.answer_form.base_fields
        explanation = page.locator("#item .explanation").inner_text().removeprefix("Why:").strip()
        reference = sentences(page, "#item .feedback-sentence .reference", 2) if tags_words else None
        assert claim_problems(explanation, seen, reference) == [], explanation
        check_key_hints(page, self.phone, ".guidelines-panel")
        if not tags_words:
            texts = page.evaluate(VISIBLE_TEXT_JS)
            assert not [text for text in texts if speaks_of_tagging(text)], "tagging words on a type without tagging"
        if self.phone:
            self.check_phone_layout()
        self.audit(state)
        if self.phone:
            page.get_by_role("link", name="Continue").tap()
        else:
            expect(page.locator("#continue")).to_be_focused()
            page.keyboard.press("Enter")


@pytest.mark.parametrize("size", ["desktop", "phone"])
@every_task_type
def test_a_judge_walks_the_whole_protocol(live_server, request, task_type, size):
    page = request.getfixturevalue(f"{size}_page")
    campaign = make_campaign(task_type)
    # The span types show yellow only when the campaign turns it on: on, so the feedback has a highlight to keep.
    campaign.span_highlight = True
    campaign.save()
    walk = Walk(page, task_type, phone=size == "phone")
    walk.start(f"{live_server.url}/j/{campaign.slug}/")
    for step in range(1, 6):
        expect(page.locator(".progress")).to_contain_text(f"Training {step} / 5")
        assignment = walk.check_item(f"training {step}")
        check_key_hints(page, walk.phone, "#item")
        seen = item_highlight(page, task_type)
        walk.answer()
        walk.check_feedback(f"feedback {step}", assignment, seen)
    for step in (1, 2):
        expect(page.locator(".progress")).to_contain_text(f"{step} / 2")
        assignment = walk.check_item(f"pair {step}")
        walk.answer()
        if step == 1:
            expect(page.locator("#item")).not_to_have_attribute("data-assignment", str(assignment.pk))
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    walk.audit("thanks")
    assert campaign.judges.get().judgments.count() == 7
    assert {state: v for state, v in walk.found.items() if v} == {}, json.dumps(walk.found, indent=1)
