"""The documentation's screenshots, taken with the browser tests' helpers: `make screenshots`.

Not collected by `make test` (the file name does not start with `test_`); pytest runs it
when named. Each test opens a judge page (a task type's first training pair, a training
feedback, similarity+spans on a touch phone) or a report in Chromium against Django's live
server and writes a small PNG into docs/img/.
"""

import re
from pathlib import Path

import pytest
from django.core.management import call_command
from PIL import Image
from playwright.sync_api import expect

from campaigns.models import Campaign
from campaigns.task_types import task_type_names
from tests.factories import judge_by_gold, without_controls
from tests.system.test_browser_report import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "img"
DEMO_PAIRS = ROOT / "fixtures" / "demo_pairs.jsonl"
# Fast metrics, computed in the test's process: the report needs scores, not a worker.
REPORT_METRICS = ["lev", "bleu", "wer", "ngram_f1"]
VIEWPORT = {"width": 900, "height": 420}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}


def image_name(task_type):
    return f"judge-{task_type.replace('+', '-')}.png"


def save(page, name, full_page=True):
    """A screenshot of the page, quantised to 256 colours: pages are flat colours, so it stays sharp and small."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    path = IMAGES / name
    page.screenshot(path=str(path), full_page=full_page)
    Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)
    return path


def demo_campaign(slug, task_type, researcher):
    call_command("import_pairs", slug, str(DEMO_PAIRS), "--create", "--task", task_type, verbosity=0)
    campaign = Campaign.objects.get(slug=slug)
    campaign.created_by = researcher
    campaign.name = f"Demo corpus ({task_type})"
    campaign.save()
    return without_controls(campaign)


@pytest.fixture
def shot_page(browser):
    context = browser.new_context(viewport=VIEWPORT, locale="en-GB")
    page = context.new_page()
    yield page
    context.close()


def start_training(page, url):
    """Consent, level and guidelines, up to the first training pair."""
    page.goto(url)
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Advanced").check()
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Start the training").click()
    expect(page.locator(".progress")).to_contain_text("Training 1 / 5")


def stable_resume_link(page):
    # The resume link holds a random token and the live server's port: a stand-in keeps the image stable.
    page.locator("p.resume a").evaluate("a => { a.textContent = 'http://127.0.0.1:8000/j/demo/…'; }")


@pytest.mark.parametrize("task_type", task_type_names())
def test_the_judge_page_of_each_task_type(live_server, shot_page, researcher, task_type):
    """The first training pair: the page every judge of this type sees, with the default trial's sentences."""
    slug = "shot-" + task_type.replace("+", "-")
    demo_campaign(slug, task_type, researcher)
    page = shot_page
    start_training(page, f"{live_server.url}/j/{slug}/")
    if "spans" in task_type:
        # Tagged words show the tagging's look: "its doors", the words the first pair's paraphrase adds
        # (a judge's tagging, not the reference, which tags nothing there: the meaning is the same).
        for word in ("its", "doors"):
            page.locator("#item button.word", has_text=re.compile(f"^{word}$")).click()
            expect(page.locator("#item button.word[aria-pressed=true]", has_text=word)).to_have_count(1)
    stable_resume_link(page)
    path = save(page, image_name(task_type))
    assert path.stat().st_size > 0


def test_the_training_feedback(live_server, shot_page, researcher):
    """The feedback after the second training pair answered Mostly similar: the pair, expected, yours, why."""
    demo_campaign("shot-feedback", "similarity", researcher)
    page = shot_page
    start_training(page, f"{live_server.url}/j/shot-feedback/")
    page.locator("#item button.answer", has_text="Same meaning").click()
    page.get_by_role("link", name="Continue").click()
    expect(page.locator(".progress")).to_contain_text("Training 2 / 5")
    page.locator("#item button.answer", has_text="Mostly similar").click()
    expect(page.locator("#item.feedback .pair mark").first).to_be_visible()
    stable_resume_link(page)
    path = save(page, "judge-training-feedback.png")
    assert path.stat().st_size > 0


def test_similarity_spans_on_a_phone(live_server, browser, researcher):
    """similarity+spans on a touch phone, asking in words for the 5-way answer that comes first."""
    demo_campaign("shot-phone", "similarity+spans", researcher)
    context = browser.new_context(**PHONE, locale="en-GB")
    page = context.new_page()
    start_training(page, f"{live_server.url}/j/shot-phone/")
    page.locator("#item button.span-nothing").tap()
    expect(page.locator("#item .five-way-missing")).not_to_be_empty()
    page.locator("#item .span-help").first.scroll_into_view_if_needed()
    # The viewport only: a full-page capture drops Chromium's mobile emulation (touch media queries).
    path = save(page, "judge-similarity-spans-phone.png", full_page=False)
    context.close()
    assert path.stat().st_size > 0


def test_a_report(live_server, shot_page, researcher):
    """The report of the demo corpus, scored by the fast metrics and judged by two judges who follow the gold labels."""
    campaign = demo_campaign("shot-report", "similarity", researcher)
    call_command("score", campaign.slug, "--metrics", *REPORT_METRICS, "--inline", verbosity=0)
    judge_by_gold(campaign, list(campaign.real_pairs))
    log_in(shot_page, live_server, researcher)
    shot_page.set_viewport_size({"width": 900, "height": 900})
    shot_page.goto(f"{live_server.url}/campaigns/{campaign.slug}/report/?label=human")
    expect(shot_page.locator("#table-table3")).to_be_visible()
    path = save(shot_page, "campaign-report.png", full_page=False)
    assert path.stat().st_size > 0
