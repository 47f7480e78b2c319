"""Two real Celery worker processes on one queue share the scoring without overlap."""

import pytest
from django.db import connection

from campaigns.models import Campaign, Score
from parasol.celery import app as celery_app
from scoring import service
from scoring.tasks import score_batch
from tests import servers
from tests.factories import add_pairs
from tests.servers import use_broker

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

METRICS = ["lev", "bleu"]


@pytest.fixture
def broker(settings):
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        use_broker(url, results=url)
        yield url
        use_broker(*old)


def start(broker, name, queues="cpu"):
    env = {"PARASOL_METRICS": ",".join(METRICS)}
    return servers.start_worker(broker, servers.database_env(connection), queues=queues, extra_env=env, name=name)


def wait_until(condition, timeout=300):
    return servers.wait_until(condition, timeout, interval=0.2)


def nodes_answering():
    return {name.split("@")[0] for reply in celery_app.control.ping(timeout=1.0) for name in reply}


def tasks_done_per_node(nodes):
    """Tasks each worker ran, once every one of `nodes` has answered (a loaded machine answers late)."""
    done = {}

    def all_answered():
        stats = celery_app.control.inspect(timeout=2.0).stats() or {}
        done.update({name.split("@")[0]: sum(node.get("total", {}).values()) for name, node in stats.items()})
        return set(nodes) <= set(done)

    wait_until(all_answered)
    return done


def node_named(prefix):
    """The full node name of a running worker, once it answers a ping."""
    found = []
    wait_until(lambda: found.extend(n for r in celery_app.control.ping(timeout=2.0) for n in r if prefix in n) or found)
    return found[0]


def queue_batches(campaign, size):
    """Score tasks whose results come back: each says how many pairs it computed."""
    ids = list(campaign.real_pairs.order_by("pk").values_list("pk", flat=True))
    return [
        score_batch.apply_async(args=[metric, batch], queue="cpu", ignore_result=False)
        for metric in METRICS
        for batch in service.batches(ids, size)
    ]


def expected_scores(campaign):
    pairs = list(campaign.real_pairs.order_by("pk").values_list("pk", "source", "hypothesis"))
    expected = {}
    for metric in METRICS:
        values = service.scorer(metric).score(sources=[p[1] for p in pairs], hypotheses=[p[2] for p in pairs])
        expected.update({(pk, metric): value for (pk, _s, _h), value in zip(pairs, values)})
    return expected


def stored_scores():
    return {(pk, metric): value for pk, metric, value in Score.objects.values_list("pair_id", "metric", "value")}


@pytest.fixture
def corpus(db):
    campaign = Campaign.objects.create(slug="shared", name="Shared")
    add_pairs(campaign, 120)
    return campaign


def test_two_workers_score_disjoint_batches_and_every_pair_once(broker, corpus):
    workers = [start(broker, "alpha"), start(broker, "beta")]
    try:
        assert wait_until(lambda: nodes_answering() == {"alpha", "beta"}), "the two workers never came up"
        results = queue_batches(corpus, size=4)
        computed = sum(result.get(timeout=600) for result in results)
        per_node = tasks_done_per_node(["alpha", "beta"])
    finally:
        for worker in workers:
            servers.stop(worker)
    # Each task returns the pairs it computed: a pair scored by both workers would count twice.
    assert computed == 120 * len(METRICS)
    assert stored_scores() == pytest.approx(expected_scores(corpus))
    assert per_node["alpha"] > 0 and per_node["beta"] > 0, per_node
    assert per_node["alpha"] + per_node["beta"] == len(results)


def test_a_worker_joining_and_one_leaving_mid_run_change_nothing(broker, corpus):
    # Enough one-pair tasks that the run outlasts the hand-over, however fast the machine: here the first worker
    # has left after about 70 of these 600 tasks (a ping, a warm shutdown); the test says so if the run ends first.
    corpus.pairs.all().delete()
    add_pairs(corpus, 300)
    n_pairs = corpus.real_pairs.count()
    first = start(broker, "first")
    # The newcomer starts on an idle queue and joins `cpu` mid-run: starting a process takes
    # longer than the whole run, so it must be up before it joins.
    second = start(broker, "second", queues="idle")
    try:
        assert wait_until(lambda: nodes_answering() == {"first", "second"}), "the workers never came up"
        second_node = node_named("second")
        results = queue_batches(corpus, size=1)
        assert wait_until(lambda: Score.objects.count() >= 10), "the first worker never started"
        celery_app.control.add_consumer("cpu", destination=[second_node], reply=True)
        servers.stop(first)  # a warm shutdown: the task in hand finishes, the rest stay queued
        at_leave = Score.objects.count()
        computed = sum(result.get(timeout=600) for result in results)
        per_node = tasks_done_per_node(["second"])
    finally:
        servers.stop(first)
        servers.stop(second)
    assert at_leave < n_pairs * len(METRICS), "the run ended before the first worker left: nothing was tested"
    assert per_node.get("second", 0) > 0, per_node
    assert computed == n_pairs * len(METRICS)
    assert stored_scores() == pytest.approx(expected_scores(corpus))
