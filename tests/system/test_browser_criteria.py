"""A judge rates pairs on PEM's four criteria with the keyboard in a real headless Chromium (Playwright)."""

import pytest
from django.test import Client
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import Judge, Judgment
from campaigns.models import Campaign
from reports.exports import judgments_frame, pairs_frame
from tests.factories import add_pairs, without_controls

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
KEYS = {"adequacy": "5", "fluency": "4", "dissimilarity": "2", "overall": "3"}


def rate_with_keys(page, keys):
    for key in keys:
        page.keyboard.press(key)
    page.keyboard.press("Enter")


def test_a_judge_rates_criteria_with_the_keyboard_and_the_report_shows_pems_tables(live_server, page, researcher):
    campaign = Campaign.objects.create(
        slug="pem", name="PEM", pairs_per_judge=3, task_type="criteria", created_by=researcher
    )
    without_controls(campaign)
    add_pairs(campaign, 3)

    page.goto(f"{live_server.url}/j/pem/")
    page.get_by_label("I agree").check()
    page.get_by_role("button", name="Start").click()
    page.get_by_label("Advanced").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="Guidelines")).to_be_visible()
    expect(page.locator(".example")).to_have_count(4)
    # Each criterion printed once: "Adequacy: 5", never "Adequacy adequacy 5".
    tags = page.locator(".example .answer-tag").all_inner_texts()
    assert tags == ["Adequacy: 5", "Fluency: 2", "Lexical dissimilarity: 1", "Overall: 5"]
    page.get_by_role("button", name="Start the training").click()

    for step in range(1, 6):
        expect(page.locator(".progress")).to_contain_text(f"Training {step} / 5")
        expect(page.locator("#item fieldset.criterion")).to_have_count(4)
        rate_with_keys(page, ["3", "3", "3", "3"])
        expect(page.locator("#item .explanation")).to_be_visible()
        expect(page.locator("#continue")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator(".progress")).not_to_contain_text(f"Training {step} / 5")

    for step in range(1, 4):
        expect(page.locator(".progress")).to_contain_text(f"{step} / 3")
        # Enter before every criterion is rated sends nothing: the browser asks for the missing ones.
        page.keyboard.press("5")
        page.keyboard.press("Enter")
        expect(page.locator(".progress")).to_contain_text(f"{step} / 3")
        page.keyboard.press("ArrowUp")
        expect(page.locator("#item fieldset.criterion.active")).to_have_attribute("data-criterion", "adequacy")
        rate_with_keys(page, list(KEYS.values()))

    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()

    judge = Judge.objects.get(campaign=campaign)
    real = Judgment.objects.filter(judge=judge, is_training=False)
    assert real.count() == 3
    expected = {name: int(key) for name, key in KEYS.items()}
    assert all(values == expected for values in real.values_list("values", flat=True))
    exported = judgments_frame(campaign)
    assert exported[~exported["is_training"]][list(KEYS)].astype(int).to_dict("records") == [expected] * 3
    pairs = pairs_frame(campaign)
    assert pairs["adequacy_mean"].tolist() == [5.0] * 3 and pairs["n_overall_3"].tolist() == [1] * 3

    client = Client()
    client.force_login(researcher)
    body = client.get(reverse("reports-show-report", args=["pem"])).content.decode()
    for title in ("PEM Table 1", "PEM Table 2", "Krippendorff", "fit: SVR from the metric scores"):
        assert title in body
