"""Many researchers on one deployment, on real Redis and four real Celery workers.

While campaign A's 5,000 pairs are being scored with the embedded SmolLM2's ParaPLUIE (queue
gpu, two workers) and Levenshtein (queue cpu), campaign B's report (forced to a worker) is
ready within 30 s and B's 60 pairs are fully scored, LLM metric included, before A's. Then a
gpu worker is killed whole (SIGKILL, main process and all) mid-batch: nothing in Celery gives
its batch back before Redis's visibility timeout (an hour), yet it is put back in the queue
within seconds and run by the other gpu worker; the campaign page says so. The test stops
there, A still unfinished: scoring all of A would take a quarter of an hour on two cores.
"""

import os
import signal
import time

import pytest
from django.db import connection, transaction
from django.db.models import Count
from django.urls import reverse

from campaigns.models import Campaign, Pair, Score
from parasol import queues
from parasol.celery import app as celery_app
from scoring.tasks import queue_scoring
from tests import servers
from tests.factories import add_pairs
from tests.servers import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

LLM = "parapluie_direct"
METRICS = ["lev", LLM]
A_PAIRS, B_PAIRS = 5000, 60
LOST_SECONDS = 6
WORKER_SETTINGS = {
    "PARASOL_METRICS": ",".join(METRICS),
    # As many as the gpu workers: B's next batch waits for at most the batches of A in their hands.
    "PARASOL_SCORING_BATCHES_PER_CAMPAIGN": "2",
    "PARASOL_SCORING_BATCH_SECONDS": "4",  # an LLM batch of A lasts seconds, as the default's minute would
    "PARASOL_WORKER_LOST_SECONDS": str(LOST_SECONDS),
}


@pytest.fixture
def stack(settings, shared_cache):
    """Redis and four workers: two on gpu (solo: killing one kills the worker), one on cpu, one interactive."""
    settings.PARASOL_METRICS = METRICS
    settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN = 2
    settings.PARASOL_SCORING_BATCH_SECONDS = 4
    settings.PARASOL_WORKER_LOST_SECONDS = LOST_SECONDS
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 0  # B's report goes to the reports worker
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        env = {**WORKER_SETTINGS, "PARASOL_CACHE_DIR": str(shared_cache)}
        database = servers.database_env(connection)
        workers = {
            "llm1": servers.start_worker(url, database, "gpu", env, name="llm1"),
            "llm2": servers.start_worker(url, database, "gpu", env, name="llm2"),
            "scorer": servers.start_worker(url, database, "cpu", env, name="scorer"),
            "interactive": servers.start_worker(url, database, "reports,training,generation", env, name="interactive"),
        }
        try:
            names = lambda: {n.split("@")[0] for r in celery_app.control.ping(timeout=1.0) for n in r}  # noqa: E731
            assert wait_until(lambda: names() == set(workers), interval=0.1), "the workers never came up"
            yield workers
        finally:
            for worker in workers.values():
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


def start_scoring(campaign, pks):
    with transaction.atomic():
        queue_scoring(pks, metrics=METRICS, campaign_pk=campaign.pk)


def running_llm_batch(node, campaign):
    """The batch of `campaign` that worker `node` holds and has started, as the staff page lists it; or None."""
    for row in queues.held_tasks():
        started = queues.client().get(queues.ATTEMPT_KEY.format(row["id"], 0))
        if row["node"].startswith(f"{node}@") and row["facts"].get("campaign") == campaign.pk and started:
            return row
    return None


def event_of(kind, batch):
    return [e for e in queues.recent_events(kind=kind) if e.get("pairs") == batch["facts"]["pairs"]]


def test_b_is_served_while_a_is_llm_scored_and_a_dead_workers_batch_is_retried(stack, client, researcher):
    workers = stack
    began = time.monotonic()
    phase = lambda what: print(f"\n{time.monotonic() - began:6.1f} s: {what}")  # noqa: E731
    a, a_pks = campaign_with("big-a", A_PAIRS, researcher)
    b, b_pks = campaign_with("small-b", B_PAIRS, researcher)
    start_scoring(a, a_pks)
    # Both gpu workers have loaded the model once A's first two LLM batches are stored.
    assert wait_until(lambda: scored(a, [LLM]) >= 8, timeout=240, interval=0.2), "A's LLM scoring never started"

    phase(f"A's first {scored(a, [LLM])} LLM scores stored")
    started = time.monotonic()
    start_scoring(b, b_pks)
    client.force_login(researcher)
    url = reverse("reports-show-report", args=[b.slug]) + "?label=gold"
    assert "Computing the report" in client.get(url).content.decode(), "the report was not handed to a worker"
    ready = lambda: "Table 3" in client.get(url, HTTP_HX_REQUEST="true").content.decode()  # noqa: E731
    assert wait_until(ready, timeout=120, interval=0.3), "B's report never came"
    report_seconds = time.monotonic() - started
    b_done = wait_until(lambda: scored(b) == B_PAIRS * len(METRICS), timeout=300, interval=0.1)
    assert b_done, f"B never finished: {[(metric, scored(b, [metric])) for metric in METRICS]}, A: {scored(a, [LLM])}"
    b_seconds = time.monotonic() - started
    a_at_b_done = scored(a, [LLM])
    phase(f"B's report {report_seconds:.1f} s; B scored {b_seconds:.1f} s; A's {LLM} then {a_at_b_done}/{A_PAIRS}")
    assert report_seconds < 30
    assert a_at_b_done < A_PAIRS, "A was done before B: A's load did not compete"

    # A gpu worker dies whole, mid-batch: no process of it is left to give its batch back.
    batch = None

    def llm_batch_running():
        nonlocal batch
        batch = running_llm_batch("llm1", a)
        return batch

    assert wait_until(llm_batch_running, timeout=120, interval=0.05), "llm1 was never seen running A's batch"
    phase(f"llm1 killed mid-batch {batch['facts']['pairs']}")
    os.kill(workers["llm1"].pid, signal.SIGKILL)
    workers["llm1"].wait()
    killed = time.monotonic()
    assert wait_until(lambda: event_of("requeued", batch), timeout=60, interval=0.2), queues.recent_events()
    requeue_seconds = time.monotonic() - killed
    phase("the batch put back")
    low, high = map(int, batch["facts"]["pairs"].split("-"))
    batch_pairs = Pair.objects.filter(campaign=a, pk__gte=low, pk__lte=high)
    # llm1 may have stored the batch's scores just before it died: the scores alone do not show the retry.
    assert wait_until(lambda: event_of("retried", batch), timeout=120, interval=0.2), queues.recent_events()
    stored = lambda: Score.objects.filter(pair__in=batch_pairs, metric=LLM).count() == batch_pairs.count()  # noqa: E731
    assert wait_until(stored, timeout=120, interval=0.2), "the dead worker's batch was never scored"
    phase(f"llm1's batch {batch['facts']['pairs']} put back {requeue_seconds:.1f} s after the kill, then scored")

    panel = client.get(reverse("scoring-show-progress", args=[a.slug])).content.decode()
    assert f"pairs {batch['facts']['pairs']}: its worker llm1@" in panel and "put back in its queue" in panel
    assert "retried once: its worker process died" in panel
    twice = Score.objects.filter(pair__campaign=a).values("pair", "metric").annotate(n=Count("pk")).filter(n__gt=1)
    assert not twice.exists()  # the retry stored each score once
    assert scored(a, [LLM]) < A_PAIRS  # stopped here: A is still being scored
