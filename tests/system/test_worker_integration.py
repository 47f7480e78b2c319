"""Scoring through a real Redis server and a real Celery worker process."""

import time

import pytest
from django.core.management import call_command
from django.db import connection

from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from metrics.registry import METRICS
from parasol.celery import app as celery_app
from scoring import dispatch
from tests import servers

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CORPUS = b"source,hypothesis\n" + b"".join(
    f"Sentence {i} is here.,Sentence {i} was there.\n".encode() for i in range(12)
)


@pytest.fixture
def redis_url():
    with servers.redis_server() as url:
        yield url


@pytest.fixture
def broker(redis_url, settings):
    """Point this process's Celery app at the throwaway Redis."""
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    servers.use_broker(redis_url, results=redis_url)
    settings.PARASOL_SCORE_ON_CREATE = True
    settings.PARASOL_METRICS = ["lev", "bleu"]
    settings.PARASOL_SCORING_BATCH_SIZE = 5
    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 5
    yield redis_url
    servers.use_broker(*old)


@pytest.fixture
def worker(broker):
    process = servers.start_worker(broker, servers.database_env(connection), extra_env={"PARASOL_METRICS": "lev,bleu"})
    yield process
    servers.stop(process)


def wait_for_scores(expected, timeout=180):
    scored = servers.wait_until(lambda: Score.objects.count() >= expected, timeout=timeout, interval=0.2)
    assert scored, f"{Score.objects.count()} scores after {timeout}s, expected {expected}"


def every_pass_closed(campaign):
    """No batch of the campaign queued or running, for any metric (`scoring.dispatch` closes a pass when its
    last batch ends, after that batch stored its scores): no score of it can still come."""
    return all(dispatch.batches_in_flight(campaign.pk, metric) == 0 for metric in METRICS)


def test_imported_pairs_are_scored_by_the_worker(worker):
    campaign = Campaign.objects.create(slug="live", name="Live")
    import_pairs(campaign, CORPUS, format="csv")
    wait_for_scores(24)
    assert servers.wait_until(lambda: every_pass_closed(campaign), timeout=180), "a scoring pass never closed"
    assert Score.objects.count() == 24
    assert Score.objects.filter(metric="lev").count() == 12
    assert Score.objects.filter(metric="bleu").count() == 12


def test_the_score_command_waits_for_the_worker_and_a_rerun_adds_nothing(worker, settings):
    settings.PARASOL_SCORE_ON_CREATE = False
    campaign = Campaign.objects.create(slug="wait", name="Wait")
    import_pairs(campaign, CORPUS, format="csv")
    assert Score.objects.count() == 0
    call_command("score", "wait", "--metrics", "lev", "bleu", "--wait", "--timeout", "300")
    assert Score.objects.count() == 24
    call_command("score", "wait", "--metrics", "lev", "bleu", "--wait", "--timeout", "300")
    assert Score.objects.count() == 24


def test_import_succeeds_while_redis_is_down_and_the_sweep_catches_up(broker, redis_url, settings):
    campaign = Campaign.objects.create(slug="down", name="Down")
    started = time.monotonic()
    with servers.unreachable_broker():
        import_pairs(campaign, CORPUS, format="csv")
    # A stall would be the broker's retry loop (minutes); the bound leaves room for a saturated machine.
    assert time.monotonic() - started < 30, "an unreachable broker must not stall the request"
    assert campaign.real_pairs.count() == 12 and Score.objects.count() == 0
    process = servers.start_worker(
        redis_url, servers.database_env(connection), extra_env={"PARASOL_METRICS": "lev,bleu"}
    )
    try:
        call_command("score", "down", "--metrics", "lev", "bleu", "--wait", "--timeout", "300")
    finally:
        servers.stop(process)
    assert Score.objects.count() == 24
