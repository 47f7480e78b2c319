"""Served LLM work apart from in-process models: its queue, its batch sizes, its time limits, and what the
campaign's scoring panel says about it (real Redis; the worker-level checks are in test_served_worker.py)."""

import json
import re

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.urls import reverse

from campaigns.models import Campaign
from metrics.backends import BackendUnavailable, parse_backends
from parasol import llm_backends, queues
from parasol.celery import app as celery_app
from scoring import dispatch, service
from scoring.tasks import score_batch, scoring_time_limits, send_batch, sweep_metric
from tests import servers
from tests.factories import add_pairs

LLM = "parapluie_direct"


@pytest.fixture
def redis_broker(settings):
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        yield url
        servers.use_broker(*old)


@pytest.fixture
def lab(settings):
    """A declared server backend (nothing needs to answer: routing and sizing never call it)."""
    declared = {
        "base_url": f"http://127.0.0.1:{servers.free_port()}/v1",
        "model": "smollm2",
        "max_concurrency": 16,
        "timeout": 30,
        "retries": 1,
        "backoff": 1,
    }
    settings.PARASOL_LLM_BACKENDS = parse_backends(json.dumps({"lab": declared}))
    return settings.PARASOL_LLM_BACKENDS["lab"]


@pytest.fixture
def served(campaign, lab):
    """The demo campaign, its ParaPLUIE DIRECT asked of the `lab` server."""
    campaign.choose_llm_backends({LLM: "lab"})
    return campaign


@pytest.fixture
def in_process(researcher):
    return Campaign.objects.create(slug="local", name="Local", created_by=researcher)


def queue_of(task, *args):
    return celery_app.amqp.router.route({}, task.name, args, {})["queue"].name


def test_a_served_campaigns_batch_goes_to_another_queue_than_the_same_metrics_in_process_batches(served, in_process):
    assert queue_of(score_batch, LLM, [1], served.pk) == queues.SERVED
    assert queue_of(score_batch, LLM, [1], in_process.pk) == "gpu"
    assert queue_of(score_batch, "parapluie_indirect", [1], served.pk) == "gpu"  # chosen per metric
    assert queue_of(score_batch, "lev", [1], served.pk) == "cpu"
    assert queue_of(sweep_metric, LLM, served.pk) == queues.SERVED
    # A sweep over every campaign builds in-process scorers too: never on the served worker.
    assert queue_of(sweep_metric, LLM, None) == "gpu"


def test_the_deployments_default_backend_routes_a_campaign_that_chose_none(settings, lab, in_process):
    settings.PARASOL_LLM_BACKEND = "lab"
    assert queue_of(score_batch, LLM, [1], in_process.pk) == queues.SERVED


@pytest.mark.django_db
def test_a_served_batch_is_whole_waves_and_its_speed_is_kept_apart(redis_broker, settings, served, in_process):
    settings.PARASOL_SCORING_BATCH_SIZE = 64
    settings.PARASOL_SCORING_BATCH_SECONDS = 10
    assert dispatch.batch_size(LLM, served.pk) == 16  # one wave before its speed is known
    assert dispatch.batch_size(LLM, in_process.pk) == dispatch.FIRST_LLM_BATCH
    dispatch.record_batch(served.pk, LLM, 32, 10.0)  # 3.2 pairs/s: 32 pairs in 10 s, two waves
    assert dispatch.batch_size(LLM, served.pk) == 32
    dispatch.record_batch(served.pk, LLM, 400, 10.0)  # fast: capped at the largest batch, in waves
    assert dispatch.batch_size(LLM, served.pk) == 64
    assert dispatch.batch_size(LLM, in_process.pk) == dispatch.FIRST_LLM_BATCH  # a server's speed is its own


@pytest.mark.django_db
def test_a_served_batch_is_sent_with_time_limits_from_its_size_and_the_backends_timeout(redis_broker, served, lab):
    limits = scoring_time_limits([LLM, list(range(40)), served.pk])
    # 40 pairs x 3 requests each at most = 120 requests, 16 at a time: 8 waves of (2 x 30 s + 1 s of backoff).
    assert (limits.backend_name, limits.soft, limits.hard) == ("lab", 8 * 61 + 60, 8 * 61 + 120)
    assert scoring_time_limits(["lev", [1], served.pk]) is None
    send_batch(LLM, served.pk, list(range(40)))
    send_batch("lev", served.pk, [1])
    with celery_app.connection_for_write() as connection:
        channel = connection.default_channel
        limited = channel.basic_get(queues.SERVED, no_ack=True)
        plain = channel.basic_get("cpu", no_ack=True)
    assert limited.headers["timelimit"] == [limits.hard, limits.soft]
    assert plain.headers["timelimit"] == [None, None]


@pytest.mark.django_db
def test_a_batch_past_its_soft_limit_waits_as_for_an_unavailable_backend(redis_broker, served, monkeypatch):
    """Celery raises SoftTimeLimitExceeded inside the task at the limit: the batch is retried as when the
    server is down (run directly here, Celery hands the error back instead of a retry), and the page says why."""
    pairs = add_pairs(served, 2)

    def past_the_limit(metric, pair_pks):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(service, "score_pairs", past_the_limit)
    with pytest.raises(BackendUnavailable, match="did not serve the batch within its time limit"):
        score_batch(LLM, [p.pk for p in pairs], served.pk)
    failure = service.campaign_failure(served, LLM)
    assert failure["waiting"] and failure["backend"] == "lab" and "time limit" in failure["message"]


@pytest.mark.parametrize(
    "rate, words",
    [
        (None, None),
        (0.0, None),
        (17.04, "17 pairs/s"),
        (2.345, "2.35 pairs/s"),
        (250.0, "250 pairs/s"),
        (0.04, "2.4 pairs/min"),
        (0.0001, "0.36 pairs/h"),
    ],
)
def test_a_rate_is_said_with_meaningful_digits(rate, words):
    assert dispatch.rate_words(rate) == words


def progress_page(client, researcher, campaign):
    client.force_login(researcher)
    return client.get(reverse("scoring-show-progress", args=[campaign.slug])).content.decode()


@pytest.mark.django_db
def test_the_panel_says_unknown_rather_than_a_time_beside_no_rate(redis_broker, client, researcher, served):
    add_pairs(served, 10)
    page = progress_page(client, researcher, served)
    assert "unknown" in page and " min<" not in page and "0.0 pairs/s" not in page
    assert "backend <code>lab</code>, queue <code>served</code>" in page
    dispatch.record_batch(served.pk, LLM, 4, 60.0)  # 4 pairs in the last minute, 10 left: about 2.5 minutes
    page = progress_page(client, researcher, served)
    assert re.search(r">[34](\.\d+)? pairs/min</td>\s*<td class=\"num\">[23] min<", page), page


@pytest.mark.django_db
def test_the_panel_counts_the_batches_of_other_campaigns_ahead(redis_broker, client, researcher, served, lab):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    other.choose_llm_backends({LLM: "lab"})
    add_pairs(served, 4)
    send_batch(LLM, other.pk, [1, 2])
    send_batch(LLM, other.pk, [3, 4])
    send_batch("lev", other.pk, [5])  # another queue: not ahead
    send_batch(LLM, served.pk, [6, 7])
    assert dispatch.batches_ahead(queues.SERVED, served.pk, LLM) == 2
    assert dispatch.batches_ahead(queues.SERVED, other.pk, LLM) == 0
    page = progress_page(client, researcher, served)
    assert '<td class="num">2</td></tr>' in page


@pytest.mark.django_db
def test_the_panel_shows_this_campaigns_own_failure_escaped_and_cut_never_anothers(
    redis_broker, client, researcher, served
):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    other.choose_llm_backends({LLM: "lab"})
    add_pairs(served, 2)
    add_pairs(other, 2)
    words = "<script>alert(1)</script> refused: " + "x" * 1000
    llm_backends.note_down(BackendUnavailable(words, "lab"), campaign=other.pk, metric=LLM)
    assert "alert" not in progress_page(client, researcher, served)  # the same backend, another campaign's note
    llm_backends.note_failed(served.pk, LLM, "lab", words)
    page = progress_page(client, researcher, served)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; refused" in page and "<script>alert" not in page
    assert "x" * (llm_backends.MESSAGE_CHARS - 40) in page and "x" * 400 not in page
    assert "last failure" in page


def test_the_watch_tells_a_broker_outage_from_a_pause_and_starts_its_evidence_again(settings):
    settings.PARASOL_WORKER_LOST_SECONDS = 60  # rounds every 20 s; a pause is a gap of over 50 s
    contact = queues.BrokerContact()
    assert contact.reached(now=0) is None
    contact.done(now=1)
    assert contact.reached(now=21) is None and contact.seconds(now=21) == 21
    contact.done(now=22)
    contact.failed(now=42)  # Redis does not answer for a while
    contact.failed(now=62)
    assert contact.reached(now=102) == ("broker lost", 60)
    assert contact.seconds(now=110) == 8  # what it knows of the others' silence starts again
    contact.done(now=110)
    assert contact.reached(now=200) == ("paused", 90)  # this process itself did not run
    assert contact.seconds(now=200) == 0


@pytest.mark.django_db
def test_no_worker_is_declared_lost_without_the_limits_worth_of_contact(redis_broker, settings, campaign):
    """A silent worker after a Redis outage: its silence counts only once the sweeper has watched for the limit."""
    settings.PARASOL_WORKER_LOST_SECONDS = 60
    score_batch.apply_async(args=["lev", [1, 2], campaign.pk], retry=False)
    with celery_app.connection_for_write() as connection:
        message = connection.default_channel.basic_get("cpu", no_ack=False)
        facts = score_batch.facts(message.decode()[0])
        queues.record_holder(message.delivery_tag, "gone@host/1/a", "gone@host", score_batch.name, "id", facts)
        assert queues.requeue_lost(contact_seconds=59) == 0  # the outage silenced it as much as anyone
        assert queues.requeue_lost(contact_seconds=61) == 1  # watched for the limit: its silence is its own


@pytest.mark.django_db
def test_a_later_claim_or_a_hand_over_makes_an_execution_step_aside(redis_broker):
    from types import SimpleNamespace

    def execution(node, task_id="t7"):
        return SimpleNamespace(id=task_id, hostname=node)

    first, again = execution("one@host"), execution("one@host")
    assert queues.still_held_here(first)  # nothing recorded: nothing says otherwise
    queues.claim(first)
    assert queues.still_held_here(first)
    queues.claim(again)  # the same task started again (kombu redelivered it to this very node)
    assert not queues.still_held_here(first) and queues.still_held_here(again)
    queues.record_holder("7", "two@host/2/b", "two@host", score_batch.name, "t7", {})
    assert not queues.still_held_here(execution("one@host"))  # taken by another node since
    assert queues.still_held_here(execution("two@host"))
    queues.client().set(queues.HANDED_OVER_KEY.format("t8"), "one@host")  # put back, nobody took it yet
    assert not queues.still_held_here(execution("one@host", "t8"))
    assert queues.still_held_here(SimpleNamespace(id=None, hostname="one@host"))  # run outside a worker
