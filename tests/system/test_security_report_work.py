"""A report whose work grows with systems, not pairs, never ties up the web (issue 25).

A campaign of 2,000 pairs naming 1,000 systems: the page answers at once with the stage a
worker reached, its downloads answer 202 instead of computing, a real Celery worker computes
it, and the next view serves it from the cache.
"""

import csv
import io
import time

import pytest
from django.db import connection

from campaigns.models import Pair
from reports import cache
from tests import servers
from tests.servers import use_broker
from tests.system.conftest import log_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

N_SYSTEMS = 1000


@pytest.fixture
def many_systems(campaign):
    """2,000 gold-labelled pairs, two per system, each system on the same two sources."""
    Pair.objects.bulk_create(
        Pair.build(
            campaign,
            external_id=f"p{i}",
            corpus="test",
            source=f"Shared source {i // N_SYSTEMS}.",
            hypothesis=f"Hypothesis {i}.",
            gold_label=(i // 7) % 2,
            metadata={"system": f"system-{i % N_SYSTEMS:04d}"},
        )
        for i in range(2 * N_SYSTEMS)
    )
    return campaign


@pytest.fixture
def broker(shared_cache):
    """A Redis broker that nobody consumes yet: what the web queues waits there."""
    from parasol.celery import app

    old = app.conf.broker_url, app.conf.result_backend
    with servers.redis_server() as url:
        use_broker(url, results=url)
        try:
            yield url
        finally:
            use_broker(*old)


def test_a_report_of_many_systems_goes_to_the_worker_and_is_served_from_the_cache(
    live_server, many_systems, broker, shared_cache, browser_of
):
    session = browser_of(many_systems.created_by)
    base = live_server.url
    page_url = f"{base}/campaigns/demo/report/?label=gold"
    query = "c=demo&label=gold"
    downloads = [
        f"{base}/reports/tables/system_pairwise.csv?{query}",
        f"{base}/reports/tables/system_pairwise.tex?{query}",
        f"{base}/reports/report.html?{query}",
        f"{base}/reports/figures/systems.png?{query}",
    ]

    page = session.get(page_url)
    assert page.status_code == 200
    assert "Computing the report" in page.text and "queued for a worker" in page.text
    for url in downloads:  # none of them computes the report in the request
        response = session.get(url)
        assert response.status_code == 202, url
        assert "being computed by a worker" in response.text and "queued for a worker" in response.text
    key = cache.report_key([many_systems], "gold")
    assert cache.cached_report(key) is None

    worker = servers.start_worker(
        broker, servers.database_env(connection), queues="reports", extra_env={"PARASOL_CACHE_DIR": str(shared_cache)}
    )
    try:
        deadline = time.monotonic() + 300
        while cache.cached_report(key) is None:
            assert worker.poll() is None, "the worker died"
            assert time.monotonic() < deadline, "the worker never delivered the report"
            time.sleep(0.5)
    finally:
        servers.stop(worker)

    computed_at = cache.cached_report(key).computed_at
    page = session.get(page_url)
    assert page.status_code == 200 and "Computing the report" not in page.text
    assert "pairwise system comparisons cover the 45 systems" in page.text
    table = session.get(downloads[0])
    assert table.status_code == 200
    rows = list(csv.DictReader(io.StringIO(table.text)))
    assert len(rows) == 45 * 44 // 2  # capped by PARASOL_REPORT_MAX_SYSTEM_COMPARISONS (1,000)
    assert session.get(downloads[2]).status_code == 200
    assert cache.cached_report(key).computed_at == computed_at  # served, not computed again


def test_downloads_of_a_small_report_are_still_computed_in_the_request(live_server, campaign, browser_of):
    Pair.objects.bulk_create(
        Pair.build(campaign, external_id=f"p{i}", source=f"s {i}", hypothesis=f"h {i}", gold_label=i % 2)
        for i in range(12)
    )
    session = browser_of(campaign.created_by)
    response = session.get(f"{live_server.url}/reports/tables/table2.csv?c=demo&label=gold")
    assert response.status_code == 200 and response.text.startswith("corpus")


def test_an_outsider_gets_no_stage_of_a_report(live_server, many_systems, broker, django_user_model):
    other = django_user_model.objects.create_user("other", password="pw-other-123", is_staff=True)
    session = log_in(live_server.url, other.username, "pw-other-123")
    assert session.get(f"{live_server.url}/reports/tables/system_pairwise.csv?c=demo&label=gold").status_code == 404
    assert session.get(f"{live_server.url}/campaigns/demo/report/").status_code == 404
