"""Faults on the real stack: a worker killed mid-task, Redis down, the web server restarted.

Each test runs real processes (redis-server, a Celery worker, gunicorn) on
127.0.0.1 against this test's database, and bounds every wait.
"""

import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Count
from rest_framework.authtoken.models import Token

from bench import load_judges
from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from generation.models import GenerationOutput, GenerationRun
from generation.tasks import batches_waiting, resume_run, start_run
from tests import servers
from tests.servers import use_broker, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

METRICS = ["lev", "bleu"]


@pytest.fixture(autouse=True)
def patient_judges(monkeypatch):
    """Simulated judges wait long for an answer: cores may be saturated by another job."""
    monkeypatch.setattr(load_judges, "REQUEST_TIMEOUT", 120)


@contextmanager
def redis_on(port):
    """A redis-server on a chosen port, so a test can stop it and start it again on the same address."""
    process = subprocess.Popen(
        [shutil.which("redis-server"), "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    try:
        servers.wait_for_port(port)
        yield process
    finally:
        servers.stop(process)


@pytest.fixture
def broker(settings):
    """A Redis this process's Celery app uses; yields (url, port, redis-server process)."""
    port = servers.free_port()
    url = f"redis://127.0.0.1:{port}/0"
    old = celery_urls()
    with redis_on(port) as process:
        use_broker(url, results=url)
        settings.PARASOL_SCORE_ON_CREATE = True
        settings.PARASOL_METRICS = METRICS
        yield url, port, process
    use_broker(*old)


def celery_urls():
    from parasol.celery import app

    return app.conf.broker_url, app.conf.result_backend


def start_worker(url, queues=None, extra_env=None):
    env = {"PARASOL_METRICS": ",".join(METRICS), **(extra_env or {})}
    return servers.start_worker(url, servers.database_env(connection), queues=queues, extra_env=env)


def corpus(count):
    return b"source,hypothesis\n" + b"".join(f"Pair {i} is short.,Pair {i} was brief.\n".encode() for i in range(count))


def assert_one_score_per_pair_and_metric(campaign):
    pairs = campaign.real_pairs.count()
    scores = Score.objects.filter(pair__campaign=campaign)
    doubled = scores.values("pair", "metric").annotate(n=Count("pk")).filter(n__gt=1)
    assert not doubled.exists(), list(doubled[:5])
    for metric in METRICS:
        assert scores.filter(metric=metric).count() == pairs, metric


def test_every_pair_ends_with_one_score_per_metric_after_the_worker_is_killed_mid_scoring(broker, settings):
    url, _port, _redis = broker
    settings.PARASOL_SCORING_BATCH_SIZE = 1  # hundreds of small tasks: the kill lands mid-way
    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 1
    # The worker hands out each campaign's next batches itself (fair shares): it must size them alike.
    small_batches = {"PARASOL_SCORING_BATCH_SIZE": "1", "PARASOL_CPU_SCORING_BATCH_SIZE": "1"}
    worker = start_worker(url, extra_env=small_batches)
    try:
        campaign = Campaign.objects.create(slug="killed", name="Killed")
        import_pairs(campaign, corpus(60), format="csv")  # 120 tasks of one pair: the kill lands mid-way
        total = 60 * len(METRICS)
        assert wait_until(lambda: Score.objects.count() >= 20, timeout=180), "the worker never started scoring"
        worker.send_signal(signal.SIGKILL)
        worker.wait(60)
        at_kill = Score.objects.count()
        assert at_kill < total, "scoring finished before the kill: nothing was tested"
        worker = start_worker(url, extra_env=small_batches)
        call_command("score", "killed", "--metrics", *METRICS, "--wait", "--timeout", "300")
    finally:
        servers.stop(worker)
    assert_one_score_per_pair_and_metric(campaign)
    print(f"\nworker killed at {at_kill}/{total} scores; after restart and sweep: {Score.objects.count()}/{total}")


@pytest.fixture
def researcher_token(researcher):
    return Token.objects.create(user=researcher).key


def _post_pairs(port, token, slug, count):
    """POST `count` pairs through the API, as a researcher's script would; returns (status, body)."""
    rows = [{"source": f"New sentence {i}.", "hypothesis": f"A new sentence, {i}."} for i in range(count)]
    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        connection_.request("POST", f"/api/campaigns/{slug}/pairs/", body=json.dumps(rows), headers=headers)
        response = connection_.getresponse()
        return response.status, response.read().decode()
    finally:
        connection_.close()


def judge(port, slug, stats, ledger, number=0):
    """A judge from the load harness: plain habits, no odd behaviour, joined and on their first pair."""
    habits = load_judges.Habits(double_click=0, go_back=0, reload=0, resume=0)
    simulated = load_judges.SimulatedJudge(number, port, slug, stats, ledger, habits, time.monotonic() + 120, 60)
    assert simulated.join()
    simulated.current = simulated.show()
    return simulated


def test_judging_and_imports_work_while_redis_is_down_and_scoring_catches_up(broker, researcher, researcher_token):
    url, redis_port, redis = broker
    campaign = load_judges.make_campaign("outage", pairs=12, overlap=2, per_judge=6)  # scored by nobody yet
    Campaign.objects.filter(pk=campaign.pk).update(created_by=researcher)
    env = load_judges.server_env(servers.database_env(connection), url)
    port = servers.free_port()
    web = load_judges.start_gunicorn(env, port, workers=2)
    load_judges.warm_up(port, 2)
    stats, ledger = load_judges.Stats(), load_judges.Ledger()
    try:
        judges = [judge(port, "outage", stats, ledger, number=n) for n in range(2)]
        for simulated in judges:
            assert simulated.work(3) is None
        servers.stop(redis)  # Redis goes away mid-session
        for simulated in judges:
            assert simulated.work(20) == "finished"
        started = time.monotonic()
        status, text = _post_pairs(port, researcher_token, "outage", 8)
        import_seconds = time.monotonic() - started
        assert status == 201, text
        # A stall would be the broker's retry loop (minutes); the bound leaves room for a saturated machine.
        assert import_seconds < 30, "an unreachable broker must not stall the import"
    finally:
        servers.stop(web)
    results = load_judges.check_invariants("outage", stats, ledger)
    assert all(passed for _, passed, _ in results), results
    assert campaign.real_pairs.count() == 20
    assert len(ledger.acknowledged) == 2 * (5 + 6)
    # Redis is back: a fresh worker and the score command catch up on everything.
    with redis_on(redis_port):
        worker = start_worker(url)
        try:
            command = [sys.executable, "manage.py", "score", "outage", "--metrics", *METRICS, "--wait"]
            done = subprocess.run(
                [*command, "--timeout", "300"], cwd=servers.REPO, env=env, capture_output=True, text=True, timeout=360
            )
        finally:
            servers.stop(worker)
    assert done.returncode == 0, done.stderr
    assert_one_score_per_pair_and_metric(campaign)
    print(f"\nimport with Redis down answered in {import_seconds:.1f} s; {Score.objects.count()} scores afterwards")


def test_a_judge_resumes_where_they_were_after_the_web_server_restarts(broker):
    url, _port, _redis = broker
    load_judges.make_campaign("restart", pairs=10, overlap=2, per_judge=5)
    env = load_judges.server_env(servers.database_env(connection), url)
    port = servers.free_port()
    web = load_judges.start_gunicorn(env, port, workers=2)
    stats, ledger = load_judges.Stats(), load_judges.Ledger()
    try:
        load_judges.warm_up(port, 2)
        simulated = judge(port, "restart", stats, ledger)
        assert simulated.work(6) is None  # training done, one real pair answered, the next one on screen
        on_screen = simulated.current
        servers.stop(web)
        web = load_judges.start_gunicorn(env, port, workers=2)
        assert simulated.show() == on_screen, "the same cookie finds the same pair after the restart"
        assert simulated.work(20) == "finished"  # the page loaded before the restart is answered first
    finally:
        servers.stop(web)
    assert (simulated.token, on_screen) in ledger.acknowledged
    results = load_judges.check_invariants("restart", stats, ledger)
    assert all(passed for _, passed, _ in results), results
    assert len(ledger.acknowledged) == 5 + 5


# A worker whose generator is a stand-in taking 0.5 s per batch: the embedded model would make
# this test take a minute or two on 2 cores (tests/generation/test_generation_run.py covers the model itself).
# With PARASOL_TEST_HOLD_AFTER=n it hangs after n batches, as a worker killed mid-run would be
# found: the kill then lands mid-run however slow the machine is, not by luck of timing.
SLOW_GENERATION_WORKER = """
import os, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
import django
django.setup()
from generation import llm

class SlowGenerator:
    revision = "slow-stand-in"
    def render(self, messages):
        return messages[-1]["content"]
    batches = 0
    def generate(self, prompts, *, decoding, n, seed):
        hold_after = int(os.environ.get("PARASOL_TEST_HOLD_AFTER", "0"))
        SlowGenerator.batches += 1
        while hold_after and SlowGenerator.batches > hold_after:
            time.sleep(1)  # until killed
        time.sleep(0.5)
        return [[(f'B: "Without doubt, {prompt[4:-1]}"', True) for _ in range(n)] for prompt in prompts]

llm.get_generator = lambda model: SlowGenerator()
from parasol.celery import app
app.worker_main(["worker", "-Q", "generation", "-P", "solo", "-l", "warning"])
"""


def start_generation_worker(url, hold_after=0):
    env = dict(os.environ, REDIS_URL=url, CELERY_BROKER_URL=url, CELERY_RESULT_BACKEND=url)
    env["PARASOL_TEST_HOLD_AFTER"] = str(hold_after)
    env.update(servers.database_env(connection))
    return subprocess.Popen([sys.executable, "-c", SLOW_GENERATION_WORKER], cwd=servers.REPO, env=env)


def test_no_generation_output_is_duplicated_when_the_worker_is_killed_mid_run(broker, researcher):
    url, _port, _redis = broker
    campaign = Campaign.objects.create(slug="generated", name="Generated", created_by=researcher)
    subjects = ["cat", "dog", "bird", "child", "teacher", "farmer"]
    worker = start_generation_worker(url, hold_after=2)
    try:
        sources = [f"The {subject} sat on the mat." for subject in subjects]
        run = start_run(campaign, sources=sources, templates=["naive"], max_new_tokens=12, batch_size=1)
        outputs = GenerationOutput.objects.filter(run=run)
        assert wait_until(lambda: outputs.count() >= 2, timeout=180, interval=0.05), "no output came"
        worker.send_signal(signal.SIGKILL)
        worker.wait(60)
        at_kill = outputs.count()
        assert at_kill < len(subjects), "the run finished before the kill: nothing was tested"
        worker = start_generation_worker(url)
        resume_run(run)  # queues what is missing; the batches still queued from the start run as well
        done = wait_until(lambda: GenerationRun.objects.get(pk=run.pk).status == "done", timeout=180, interval=0.2)
        assert done, GenerationRun.objects.get(pk=run.pk).progress()
        # A duplicate batch still queued must add nothing: once none waits for its turn, a marker
        # queued behind every batch runs after them all.
        assert wait_until(lambda: batches_waiting(run.pk) == 0, timeout=180, interval=0.2), "batches kept waiting"
        servers.run_marker("generation", timeout=180)
    finally:
        servers.stop(worker)
    assert outputs.count() == len(subjects)
    doubled = outputs.values("source", "template", "candidate").annotate(n=Count("pk")).filter(n__gt=1)
    assert not doubled.exists()
    pairs = campaign.pairs.filter(external_id__startswith=f"gen{run.pk}-")
    assert pairs.count() == outputs.filter(accepted=True).count() == outputs.filter(pair__isnull=False).count()
    assert pairs.count() > 0
    print(f"\ngeneration worker killed at {at_kill}/{len(subjects)} outputs; after resume: {outputs.count()}")
