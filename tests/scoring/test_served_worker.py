"""The served worker against a real fake server (bench/paced_server.py) and real Redis: it feeds a backend
`max_concurrency` requests at once and never more, never waits behind in-process batches, survives a broker
outage without a worker declared lost, and a worker paused past the limit steps aside once resumed."""

import json
import os
import signal

import pytest
from django.db import connection, transaction

from bench.paced_server import PacedServer, parapluie_logprobs
from campaigns.models import Campaign, Score
from metrics.backends import parse_backends
from parasol import queues
from parasol.celery import app as celery_app
from scoring import dispatch
from scoring.tasks import queue_scoring
from tests import servers
from tests.factories import add_pairs

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

LLM = "parapluie_direct"
LOST_SECONDS = 6  # the watch's pause detection needs a few seconds of slack on a loaded machine


def declared(url, **options):
    return {"base_url": url, "model": "smollm2", "revision": "paced", "retries": 0, "timeout": 60, **options}


@pytest.fixture
def stack(settings, researcher):
    """Redis as this process's broker; yields a function that starts served workers for a backend, one a name
    (together: each takes seconds to load Django and Celery), and returns them once every one answers."""
    settings.PARASOL_METRICS = [LLM]
    settings.PARASOL_WORKER_LOST_SECONDS = LOST_SECONDS
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    started = []
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)

        def start(names, backends, batches_per_campaign=2, threads=4):
            settings.PARASOL_LLM_BACKENDS = parse_backends(json.dumps(backends))
            settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN = batches_per_campaign
            env = {
                "PARASOL_METRICS": LLM,
                "PARASOL_LLM_BACKENDS": json.dumps(backends),
                "PARASOL_WORKER_LOST_SECONDS": str(LOST_SECONDS),
                "PARASOL_SCORING_BATCHES_PER_CAMPAIGN": str(batches_per_campaign),
            }
            database = servers.database_env(connection)
            workers = {
                name: servers.start_worker(url, database, queues.SERVED, env, name, pool="threads", concurrency=threads)
                for name in names
            }
            started.extend(workers.values())
            assert servers.wait_until(lambda: answering(names), timeout=120, interval=0.2), f"{names} never came up"
            return workers

        try:
            yield start
        finally:
            for worker in started:
                if worker.poll() is None:
                    os.kill(worker.pid, signal.SIGCONT)  # a paused one must be able to stop
                servers.stop(worker)
            servers.use_broker(*old)


def answering(names):
    """Whether every one of `names` answers one ping."""
    nodes = {node.split("@")[0] for reply in celery_app.control.ping(timeout=1.0) for node in reply}
    return set(names) <= nodes


def campaign_on(slug, researcher, backend, n):
    campaign = Campaign.objects.create(slug=slug, name=slug, created_by=researcher)
    if backend:
        campaign.choose_llm_backends({LLM: backend})
    return campaign, [pair.pk for pair in add_pairs(campaign, n)]


def start_scoring(campaign, pks):
    with transaction.atomic():
        queue_scoring(pks, metrics=[LLM], campaign_pk=campaign.pk)


def scored(campaign):
    return Score.objects.filter(pair__campaign=campaign, metric=LLM).count()


def events(kind):
    return queues.recent_events(kind=kind)


def test_a_server_is_fed_its_max_concurrency_at_once_and_never_waits_behind_in_process_batches(stack, researcher):
    with PacedServer(capacity=64, latency=0.4, top_logprobs=parapluie_logprobs()) as server:
        stack(["served"], {"lab": declared(server.url, max_concurrency=8)})
        local, local_pks = campaign_on("local", researcher, None, 8)
        start_scoring(local, local_pks)  # in-process: to `gpu`, which no worker serves here
        lab, lab_pks = campaign_on("lab", researcher, "lab", 48)
        start_scoring(lab, lab_pks)
        assert servers.wait_until(lambda: scored(lab) == 48, timeout=240, interval=0.2), "the served campaign stalled"
        assert queues.queue_lengths()["gpu"] >= 1 and scored(local) == 0  # the in-process batch still waits
        # Two batches of the campaign ran at once on the worker's threads: their requests shared 8 slots.
        assert server.peak == 8
        assert server.served == 48  # one request per pair: none sent twice


def test_a_broker_outage_declares_no_worker_lost_and_runs_no_batch_twice(stack, researcher):
    # 0.3 s a wave: the batch's 32 waves outlast the moment the outage starts by seconds, and the waves left after
    # it show that the worker goes on with its batch, whatever their pace.
    with PacedServer(capacity=64, latency=0.3, top_logprobs=parapluie_logprobs()) as server:
        backends = {"lab": declared(server.url, max_concurrency=2)}
        stack(["one", "two"], backends, batches_per_campaign=1)
        lab, pks = campaign_on("lab", researcher, "lab", 64)
        dispatch.record_batch(lab.pk, LLM, 10_000, 1.0)  # measured fast: one batch of 64 pairs, 32 waves of 2: 10 s
        start_scoring(lab, pks)
        assert servers.wait_until(lambda: scored(lab) >= 4, timeout=300, interval=0.1), "scoring never started"
        # Redis answers no one for three times the limit: every worker is silent, none is lost.
        queues.client().execute_command("CLIENT", "PAUSE", LOST_SECONDS * 3 * 1000, "ALL")
        assert servers.wait_until(lambda: scored(lab) == 64, timeout=300, interval=0.2), "scoring never finished"
        assert servers.wait_until(lambda: events("broker lost"), timeout=60, interval=0.2), "no worker said so"
        assert events("requeued") == [] and events("stepped aside") == []
        assert server.served <= 64 + 2  # at most one wave again, were kombu to redeliver it after the outage


def test_a_worker_paused_past_the_limit_steps_aside_once_resumed(stack, researcher):
    # 0.4 s a wave: the holder is paused seconds before its batch could end, and the hand-over does not depend on
    # the pace (the replacement takes the batch whenever the watch finds the holder lost, LOST_SECONDS on).
    with PacedServer(capacity=64, latency=0.4, top_logprobs=parapluie_logprobs()) as server:
        backends = {"lab": declared(server.url, max_concurrency=2)}
        workers = stack(["one", "two"], backends, batches_per_campaign=1)
        lab, pks = campaign_on("lab", researcher, "lab", 64)
        dispatch.record_batch(lab.pk, LLM, 10_000, 1.0)  # one batch of 64 pairs, 32 waves of 2: 13 s
        start_scoring(lab, pks)
        assert servers.wait_until(lambda: scored(lab) >= 4, timeout=300, interval=0.1), "scoring never started"
        (holder,) = [row["node"].split("@")[0] for row in queues.held_tasks()]
        other = "two" if holder == "one" else "one"
        os.kill(workers[holder].pid, signal.SIGSTOP)
        try:
            requeued = servers.wait_until(lambda: events("requeued"), timeout=120, interval=0.2)
            assert requeued, f"the paused worker's batch was never handed over: {queues.held_tasks()}"
            assert f"{holder}@" in events("requeued")[0]["reason"]
            taken = lambda: any(row["node"].startswith(f"{other}@") for row in queues.held_tasks())  # noqa: E731
            assert servers.wait_until(taken, timeout=60, interval=0.1), "the replacement never took the batch"
        finally:
            os.kill(workers[holder].pid, signal.SIGCONT)
        assert servers.wait_until(lambda: events("stepped aside"), timeout=120, interval=0.2), "it ran on"
        assert servers.wait_until(lambda: scored(lab) == 64, timeout=300, interval=0.2), "scoring never finished"
        assert servers.wait_until(lambda: events("paused"), timeout=60, interval=0.2), "the worker never said so"
        # The resumed worker sent nothing more: only its wave in flight when paused was asked twice.
        assert server.served <= 64 + 2
