"""Fair shares of scoring, the routes of every task, and tasks given up after their worker died: on a real Redis."""

import os

import pytest
from django.urls import reverse

from generation.tasks import generate_batch
from parasol import queues
from parasol.celery import app as celery_app
from reports.detector import training_status
from reports.tasks import compute_report_task, train_detector_task
from scoring import dispatch
from scoring.tasks import score_batch
from tests import servers
from tests.factories import add_pairs


@pytest.fixture
def redis_broker():
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        yield url
        servers.use_broker(*old)


def queue_of(task, *args):
    return celery_app.amqp.router.route({}, task.name, args, {})["queue"].name


@pytest.mark.django_db  # an LLM metric's queue follows its campaign's backend
@pytest.mark.parametrize("metric, queue", [("lev", "cpu"), ("parapluie_direct", "gpu")])
def test_every_task_is_routed_once_in_settings(metric, queue):
    assert queue_of(compute_report_task, [1], "gold") == "reports"
    assert queue_of(train_detector_task, 1, {}) == "training"
    assert queue_of(generate_batch, 1, [1]) == "generation"
    assert queue_of(score_batch, metric, [1], 1) == queue


@pytest.mark.django_db
def test_each_campaign_has_at_most_its_share_queued_and_a_finished_batch_brings_its_next(redis_broker, settings):
    from campaigns.models import Campaign

    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 5
    settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN = 2
    big, small = Campaign.objects.create(slug="big", name="Big"), Campaign.objects.create(slug="small", name="Small")
    add_pairs(big, 100)
    add_pairs(small, 10)
    fifo = []
    send = lambda metric, campaign_pk, pks: fifo.append((campaign_pk, pks))  # noqa: E731
    dispatch.start_pass(big.pk, "lev", 1, send)
    dispatch.start_pass(small.pk, "lev", 1, send)
    assert [campaign for campaign, _ in fifo] == [big.pk, big.pk, small.pk, small.pk]
    order = []
    while fifo:  # one worker taking the queue first come, first served
        campaign_pk, pks = fifo.pop(0)
        order.append(campaign_pk)
        dispatch.finished(campaign_pk, "lev", send)
        assert sum(1 for c, _ in fifo if c == big.pk) <= 2
    assert order.count(big.pk) == 20 and order.count(small.pk) == 2
    assert max(i for i, c in enumerate(order) if c == small.pk) == 3  # small's last batch: fourth, not 22nd
    assert dispatch.batches_in_flight(big.pk, "lev") == 0  # the pass ended and its state went with it


@pytest.mark.django_db
def test_a_campaign_with_one_metric_left_keeps_its_share_beside_one_scoring_several(redis_broker, settings):
    """The share is per campaign and queue, not per metric: a campaign whose one slow metric is left is not
    held to a fifth of the queue by another scoring four (the demo's last LLM metric beside an import)."""
    from campaigns.models import Campaign

    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 5
    settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN = 2
    big, small = Campaign.objects.create(slug="big", name="Big"), Campaign.objects.create(slug="small", name="Small")
    add_pairs(big, 100)
    add_pairs(small, 20)
    metrics = ["lev", "bleu", "wer", "meteor"]  # all on the cpu queue
    fifo = []
    send = lambda metric, campaign_pk, pks: fifo.append((campaign_pk, metric, pks))  # noqa: E731
    for metric in metrics:
        dispatch.start_pass(big.pk, metric, 1, send)
    dispatch.start_pass(small.pk, "lev", 1, send)
    assert sum(1 for c, _m, _p in fifo if c == big.pk) == 2  # two places for the campaign, not two per metric
    order = []
    while fifo:
        campaign_pk, metric, pks = fifo.pop(0)
        order.append((campaign_pk, metric))
        dispatch.finished(campaign_pk, metric, send)
        for campaign in (big.pk, small.pk):
            assert sum(1 for c, _m, _p in fifo if c == campaign) <= 2
    small_positions = [i for i, (campaign, _m) in enumerate(order) if campaign == small.pk]
    assert len(small_positions) == 4 and max(small_positions) <= 8  # every other batch, from the start
    big_metrics = [metric for campaign, metric in order if campaign == big.pk]
    assert big_metrics[:2] == ["lev", "lev"]  # started first, alone in the share for a moment
    assert set(big_metrics[2:5]) == {"bleu", "meteor", "wer"}  # then the others' turns before lev's third
    assert all(big_metrics.count(metric) == 20 for metric in metrics)
    assert all(dispatch.batches_in_flight(big.pk, metric) == 0 for metric in metrics)


@pytest.mark.django_db
def test_a_pass_never_ends_on_a_batch_of_a_few_pairs(redis_broker, settings):
    """A last batch of a pair or two would wait a whole round of the queue: under half a batch joins the one before."""
    from campaigns.models import Campaign

    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 10
    campaign = Campaign.objects.create(slug="odd", name="Odd")
    add_pairs(campaign, 24)
    sent = []
    send = lambda metric, campaign_pk, pks: sent.append(pks)  # noqa: E731
    dispatch.start_pass(campaign.pk, "lev", 1, send)
    while len(sent) < 2 or dispatch.batches_in_flight(campaign.pk, "lev"):
        dispatch.finished(campaign.pk, "lev", send)
    assert [len(pks) for pks in sent] == [10, 14]  # not 10, 10, 4
    assert sorted(pk for pks in sent for pk in pks) == sorted(campaign.pairs.values_list("pk", flat=True))


@pytest.mark.django_db  # an LLM metric's batch size reads its campaign's backend
def test_a_slow_metric_gets_batches_of_bounded_time(redis_broker, settings):
    settings.PARASOL_SCORING_BATCH_SIZE = 64
    settings.PARASOL_SCORING_BATCH_SECONDS = 60
    assert dispatch.batch_size("parapluie_direct") == dispatch.FIRST_LLM_BATCH  # not measured yet: small
    dispatch.record_batch(None, "parapluie_direct", 4, 20.0)  # 0.2 pairs/s, as an LLM on two cores
    assert dispatch.batch_size("parapluie_direct") == 12


@pytest.mark.django_db
def test_a_task_whose_worker_died_twice_is_failed_with_its_reason_on_the_page(
    redis_broker, client, campaign, researcher
):
    campaign.task_type = "spans"
    campaign.save()
    train_detector_task.push_request(id="lost-training", retries=0, called_directly=False, is_eager=False)
    try:
        for _ in range(2):  # two starts whose worker died (SIGKILL, out of memory) before the end
            queues._start_attempt("lost-training", 0)
        assert train_detector_task(campaign.pk, {}) is None  # the third start gives up, running nothing
    finally:
        train_detector_task.pop_request()
    assert training_status(campaign.pk)["stage"] == "failed"
    client.force_login(researcher)
    panel = client.get(reverse("reports-show-detector", args=[campaign.slug])).content.decode()
    assert queues.LOST_REASON in panel
    (event,) = queues.recent_events(kind="failed")
    assert event["task"] == train_detector_task.name and event["campaign"] == campaign.pk


@pytest.mark.django_db
def test_the_report_page_says_what_a_queued_report_waits_for(redis_broker, client, researcher, campaign, settings):
    add_pairs(campaign, 4)
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 0
    client.force_login(researcher)
    page = client.get(reverse("reports-show-report", args=[campaign.slug])).content.decode()
    assert "queue &#x27;reports&#x27;: 1 task(s) waiting and no worker serving it" in page


@pytest.mark.django_db
def test_the_queues_page_is_for_superusers_and_shows_every_queue(redis_broker, client, researcher, django_user_model):
    assert client.get(reverse("scoring-show-queues")).status_code == 302  # to the login form
    client.force_login(researcher)  # a researcher (staff) sees only their own campaigns: not this page
    refused = client.get(reverse("scoring-show-queues"))
    assert refused.status_code == 403 and "The queues page is for superusers" in refused.content.decode()
    admin = django_user_model.objects.create_superuser("operator", password="pw-operator-123")
    client.force_login(admin)
    page = client.get(reverse("scoring-show-queues")).content.decode()
    for queue in queues.ALL:
        assert f"<code>{queue}</code>" in page
    assert "No worker answers." in page


@pytest.mark.django_db
def test_a_message_held_by_a_dead_worker_goes_back_to_its_queue_once(redis_broker, client, campaign, django_user_model):
    """A worker that died whole never gives back what it took: the sweep does, and only that (real Redis)."""
    dead, alive = "dead@host/1/a", "alive@host/2/b"
    queues._say_alive(alive)
    with celery_app.connection_for_write() as connection:  # kept open: a closed channel gives its messages back
        channel = connection.default_channel
        for pks in ([1, 2], [3, 4], [5, 6]):
            score_batch.apply_async(args=["lev", pks, campaign.pk], retry=False)
        taken = [channel.basic_get("cpu", no_ack=False) for _ in range(3)]
        for message, worker in zip(taken, [dead, alive, alive], strict=True):
            facts = score_batch.facts(message.decode()[0])
            queues.record_holder(message.delivery_tag, worker, worker.split("/")[0], score_batch.name, "id", facts)
        channel.basic_ack(taken[2].delivery_tag)  # the third one is done
        assert queues.queue_lengths()["cpu"] == 0

        watched = 3600  # this process has reached the broker without a break for an hour: its evidence counts
        assert queues.requeue_lost(watched) == 1
        assert queues.requeue_lost(watched) == 0  # put back once
        assert queues.queue_lengths()["cpu"] == 1
        assert channel.basic_get("cpu", no_ack=True).headers["id"] == taken[0].headers["id"]
        (event,) = queues.recent_events(kind="requeued")
        assert event["pairs"] == "1-2" and event["campaign"] == campaign.pk and "dead@host stopped" in event["reason"]
        assert [(row["node"], row["facts"]["pairs"]) for row in queues.held_tasks()] == [("alive@host", "3-4")]

        client.force_login(django_user_model.objects.create_superuser("operator", password="pw-operator-123"))
        page = client.get(reverse("scoring-show-queues")).content.decode()
        assert "alive@host" in page and "pairs 3-4" in page and "put back in its queue" in page


@pytest.mark.django_db
def test_the_queues_page_says_when_the_broker_cannot_be_reached(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("operator", password="pw-operator-123"))
    with servers.unreachable_broker():
        page = client.get(reverse("scoring-show-queues")).content.decode()
    assert "cannot be reached" in page


@pytest.mark.django_db
def test_a_report_whose_worker_died_twice_says_so_on_its_page(redis_broker, client, researcher, campaign, settings):
    from campaigns.models import Pair

    add_pairs(campaign, 4)
    Pair.objects.filter(campaign=campaign).update(gold_label=1)
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 0
    compute_report_task.push_request(id="lost-report", retries=0, called_directly=False, is_eager=False)
    try:
        for _ in range(2):
            queues._start_attempt("lost-report", 0)
        assert compute_report_task([campaign.pk], "gold") is None
    finally:
        compute_report_task.pop_request()
    client.force_login(researcher)
    page = client.get(reverse("reports-show-report", args=[campaign.slug]) + "?label=gold").content.decode()
    assert "could not be computed" in page and queues.LOST_REASON in page


# A dispatcher that takes a share's lock, with a lease of three seconds, says so and works on past several leases.
HOLDER = """
import os, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
import django
django.setup()
from scoring import dispatch
dispatch.LEASE_SECONDS = 3
held = dispatch._locked(sys.argv[1])
held.__enter__()
print("held", flush=True)
time.sleep(600)
"""


@pytest.mark.integration  # a child process and seconds of watching: out of the edit-test loop
def test_a_dispatcher_killed_holding_a_share_lock_frees_it_within_its_lease(redis_broker):
    """A live holder keeps the share's lock past its lease (it renews it); killed mid-way (SIGKILL), it frees it
    within the lease, so the campaign's other dispatchers do not wait a minute and give up."""
    import signal
    import subprocess
    import sys
    import time

    share = "parasol:scoring-share:cpu:999999"
    env = {**os.environ, "CELERY_BROKER_URL": redis_broker, "REDIS_URL": redis_broker}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, share], cwd=servers.REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        r = queues.client()
        lock_key = f"{share}:lock"
        since = time.monotonic()
        # Two leases and more on, the live holder still has it (renewed every second), its time to live never
        # above one lease.
        while time.monotonic() - since < 7:
            assert 0 < r.pttl(lock_key) <= 3000
            time.sleep(0.1)
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        assert servers.wait_until(lambda: not r.exists(lock_key), timeout=30)  # was held two minutes
        with dispatch._locked(share):
            assert r.exists(lock_key)
        assert not r.exists(lock_key)
    finally:
        holder.kill()
        holder.wait(30)
