"""A large report is computed by a real worker while the page shows progress, then the result."""

import time

import pytest
from django.db import connection
from django.urls import reverse

from reports.tasks import report_or_status
from scoring import service
from tests import servers
from tests.factories import add_pairs

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gold_campaign(campaign):
    pairs = add_pairs(campaign, 30)
    for i, pair in enumerate(pairs):
        pair.gold_label = i % 2
        pair.save()
    service.score_pairs("lev", [pair.pk for pair in pairs])
    return campaign


@pytest.fixture
def worker(settings, shared_cache):
    env = {"PARASOL_CACHE_DIR": str(shared_cache), "PARASOL_METRICS": "lev"}
    with servers.broker_with_worker(connection, queues="reports", extra_env=env) as (_url, process):
        yield process


def get(client, url, htmx=False):
    response = client.get(url, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_progress_then_the_report_the_worker_computed(
    client, researcher, gold_campaign, worker, settings
):
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 10
    client.force_login(researcher)
    url = reverse("reports-show-report", args=[gold_campaign.slug]) + "?label=gold"
    first = get(client, url)
    assert "Computing the report" in first and "Table 3" not in first
    deadline = time.monotonic() + 120
    body = first
    while "Table 3" not in body:
        assert time.monotonic() < deadline, "the worker never delivered the report"
        time.sleep(0.5)
        body = get(client, url, htmx=True)
    assert "Computing the report" not in body
    report, status = report_or_status([gold_campaign], "gold")
    assert status is None and report.report.summary["n_pairs"] == 30


def test_a_small_report_is_computed_in_the_request(client, researcher, gold_campaign, settings):
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 100
    client.force_login(researcher)
    body = get(client, reverse("reports-show-report", args=[gold_campaign.slug]) + "?label=gold")
    assert "Table 3" in body and "Computing the report" not in body


def test_an_unreachable_broker_means_the_request_computes_it(client, researcher, gold_campaign, settings):
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 10
    client.force_login(researcher)
    with servers.unreachable_broker():
        body = get(client, reverse("reports-show-report", args=[gold_campaign.slug]) + "?label=gold")
    assert "Table 3" in body
