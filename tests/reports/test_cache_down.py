"""Researcher pages with the cache (Redis) unreachable: a page that needs it says so (503), never a 500;
judge pages do not read it (issue 48)."""

import pytest
from django.test import Client
from django.urls import reverse

from tests import servers
from tests.reports.test_report_views import judged_campaign  # noqa: F401 - the fixture
from tests.servers import closed_port


@pytest.fixture
def cache_down(settings):
    """The report cache and the broker on a port nothing answers on (compose runs both in one Redis)."""
    with closed_port() as port:
        url = f"redis://127.0.0.1:{port}/1"
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
        settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 10_000  # a small report computes in the request
        with servers.unreachable_broker():
            yield url


def researcher_pages(slug):
    query = f"?c={slug}&label=gold"
    return [
        reverse("reports-show-report", args=[slug]),
        reverse("reports-show-cross-report") + query,
        reverse("reports-download-report-table", args=["table3"]) + query,
        reverse("reports-download-report-latex", args=["table3"]) + query,
        reverse("scoring-show-progress", args=[slug]),
        reverse("campaigns-list-campaigns"),
    ]


def test_researcher_pages_answer_without_the_cache_and_never_a_500(judged_campaign, researcher, cache_down):  # noqa: F811
    client = Client(raise_request_exception=False)
    client.force_login(researcher)
    for url in researcher_pages(judged_campaign.slug):
        response = client.get(url)
        assert response.status_code in (200, 503), (url, response.status_code)
        if response.status_code == 503:
            assert "Reports are unavailable while the cache is down" in response.content.decode(), url


def test_the_scoring_panel_says_the_broker_is_down(judged_campaign, researcher, cache_down):  # noqa: F811
    client = Client(raise_request_exception=False)
    client.force_login(researcher)
    response = client.get(reverse("scoring-show-progress", args=[judged_campaign.slug]))
    text = response.content.decode()
    assert response.status_code in (200, 503)
    assert "broker cannot be reached" in text or "cache is down" in text
