"""Actions with a precondition, in Chromium: offered disabled, saying what they have and what they need."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from campaigns.importers import import_pairs
from campaigns.models import Campaign
from metrics.paratag_training import MIN_TAGGED_PAIRS
from tests.factories import without_controls
from tests.system.test_browser_report import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TAGGED_PAIRS = Path(__file__).resolve().parents[2] / "fixtures" / "span_detector_pairs.jsonl"


@pytest.fixture
def twenty_tagged(researcher, settings):
    """A span campaign with 20 pre-tagged pairs (training needs 30), and no broker: a queued training would show."""
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    campaign = Campaign.objects.create(slug="tagged", name="Tagged", task_type="spans", created_by=researcher)
    import_pairs(campaign, b"".join(TAGGED_PAIRS.read_bytes().splitlines(keepends=True)[:20]))
    without_controls(campaign)
    return campaign


def test_the_detector_action_shows_why_it_is_disabled(page, live_server, researcher, twenty_tagged):
    log_in(page, live_server, researcher)
    page.goto(f"{live_server.url}/campaigns/{twenty_tagged.slug}/")

    train = page.locator("#span-detector").get_by_role("button", name="Train the detector")
    expect(train).to_be_disabled()
    expect(train).to_have_accessible_description(
        re.compile(rf"needs at least {MIN_TAGGED_PAIRS} tagged pairs .*this campaign has 20 tagged pair\(s\)")
    )
    expect(page.locator("#detector-shortfall")).to_be_visible()
