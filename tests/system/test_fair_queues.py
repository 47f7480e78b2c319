"""Many researchers on one deployment, on real Redis and three real Celery workers.

Campaign A's import keeps two scoring workers busy; campaign B's report (forced to a
worker) is ready within 30 s, and B's 60 pairs are fully scored before A's. A's load is
made saturating by its batch size, not by its pair count: 3,000 pairs in batches of 10 are
600 batches per metric... as many as 60,000 pairs in the default batches of 1,000, all
ahead of B's under first-come queues. A worker process killed mid-batch has its batch
retried, and the campaign page says so.
"""

import os
import signal
import time

import pytest
from django.db import connection, transaction
from django.urls import reverse

from campaigns.models import Campaign, Pair
from parasol.celery import app as celery_app
from parasol.queues import recent_events
from scoring.models import Score
from scoring.tasks import queue_scoring
from tests import servers
from tests.factories import add_pairs
from tests.servers import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

METRICS = ["lev", "bleu"]
A_PAIRS, B_PAIRS, BATCH = 3000, 60, 10
WORKER_SETTINGS = {
    "PARASOL_METRICS": ",".join(METRICS),
    "PARASOL_CPU_SCORING_BATCH_SIZE": str(BATCH),
    "PARASOL_SCORING_BATCHES_PER_CAMPAIGN": "2",
}


@pytest.fixture
def stack(settings, shared_cache):
    """Redis and three workers: two scoring (one pool process each, so one can be killed), one interactive."""
    settings.PARASOL_METRICS = METRICS
    settings.PARASOL_CPU_SCORING_BATCH_SIZE = BATCH
    settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN = 2
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 0  # B's report goes to the reports worker
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        env = {**WORKER_SETTINGS, "PARASOL_CACHE_DIR": str(shared_cache)}
        database = servers.database_env(connection)
        workers = [
            servers.start_worker(url, database, "cpu", env, name="scorer1", pool="prefork"),
            servers.start_worker(url, database, "cpu", env, name="scorer2", pool="prefork"),
            servers.start_worker(url, database, "reports,training,generation", env, name="interactive"),
        ]
        try:
            names = lambda: {n.split("@")[0] for r in celery_app.control.ping(timeout=1.0) for n in r}  # noqa: E731
            assert wait_until(lambda: names() == {"scorer1", "scorer2", "interactive"}, interval=0.1), (
                "the workers never came up"
            )
            yield url
        finally:
            for worker in workers:
                servers.stop(worker)
            servers.use_broker(*old)


def campaign_with(slug, n, researcher):
    campaign = Campaign.objects.create(slug=slug, name=slug, created_by=researcher)
    pairs = add_pairs(campaign, n)
    Pair.objects.filter(pk__in=[p.pk for p in pairs[::2]]).update(gold_label=1)
    Pair.objects.filter(pk__in=[p.pk for p in pairs[1::2]]).update(gold_label=0)
    return campaign, [p.pk for p in pairs]


def scored(campaign, metrics=METRICS):
    return Score.objects.filter(pair__campaign=campaign, metric__in=metrics).count()


def start_scoring(campaign, pks, metrics=METRICS):
    with transaction.atomic():
        queue_scoring(pks, metrics=metrics, campaign_pk=campaign.pk)


def test_b_is_served_while_a_is_scored_and_a_killed_batch_is_retried(stack, client, researcher):
    a, a_pks = campaign_with("big-a", A_PAIRS, researcher)
    b, b_pks = campaign_with("small-b", B_PAIRS, researcher)
    start_scoring(a, a_pks)
    assert wait_until(lambda: scored(a) >= 50, interval=0.1), "A's scoring never started"

    started = time.monotonic()
    start_scoring(b, b_pks)
    client.force_login(researcher)
    url = reverse("reports-show-report", args=[b.slug]) + "?label=gold"
    first = client.get(url).content.decode()
    assert "Computing the report" in first, "the report was not handed to a worker"
    ready = lambda: "Table 3" in client.get(url, HTTP_HX_REQUEST="true").content.decode()  # noqa: E731
    assert wait_until(ready, timeout=120, interval=0.3), "B's report never came"
    report_seconds = time.monotonic() - started

    assert wait_until(lambda: scored(b) == B_PAIRS * len(METRICS), timeout=300, interval=0.05)
    b_seconds = time.monotonic() - started
    a_at_b_done = scored(a)
    print(f"\nB's report in {report_seconds:.1f} s; B scored in {b_seconds:.1f} s; A then {a_at_b_done}/{A_PAIRS * 2}")
    assert report_seconds < 30
    assert a_at_b_done < A_PAIRS * len(METRICS), "A was done before B: A's load did not compete"

    # A third campaign with a model-backed metric: its first batch loads the model for seconds,
    # long enough to kill the pool process running it.
    c, c_pks = campaign_with("killed-c", 20, researcher)
    start_scoring(c, c_pks, metrics=["sbert"])
    victim = []

    def running_sbert():
        for _node, tasks in (celery_app.control.inspect(timeout=1.0).active() or {}).items():
            victim.extend(t["worker_pid"] for t in tasks if t["args"] and "sbert" in str(t["args"]))
        return victim

    assert wait_until(running_sbert, timeout=120, interval=0.05), "no sbert batch was seen running"
    os.kill(victim[0], signal.SIGKILL)
    assert wait_until(lambda: scored(c, ["sbert"]) == 20, timeout=300, interval=0.1), (
        "C's killed batch was never retried"
    )
    assert wait_until(lambda: scored(a) == A_PAIRS * len(METRICS), timeout=300, interval=0.1), "A never finished"

    retried = [e for e in recent_events(kind="retried") if e.get("campaign") == c.pk]
    assert retried and retried[0]["metric"] == "sbert", recent_events()
    panel = client.get(reverse("scoring-show-progress", args=[c.slug])).content.decode()
    assert "retried once" in panel and "died" in panel
    assert Score.objects.filter(pair__campaign=c).count() == 20  # once per pair, never twice
