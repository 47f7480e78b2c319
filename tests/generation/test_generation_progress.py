"""Progress a researcher can watch: batches sized by time (one source before the speed is known), the
time left from the recent rate (never beside a zero rate), and the selection's wait with its queue."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from generation import llm
from generation.models import GenerationOutput, GenerationRun, create_run
from generation.selection import stage_progress
from generation.tasks import generate_batch, model_speed, record_speed
from parasol import queues
from parasol.celery import app as celery_app
from parasol.progress import time_left
from scoring.service import score_inline
from tests import servers
from tests.generation.test_generation_run import FakeGenerator
from tests.generation.test_generation_selection import Varied

pytestmark = pytest.mark.django_db

SOURCES = [f"Sentence number {n} is about the weather." for n in range(7)]


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture
def fake(monkeypatch):
    generator = FakeGenerator()
    monkeypatch.setattr(llm, "get_generator", lambda model: generator)
    return generator


@pytest.mark.parametrize(
    ("speed", "candidates", "batch_size", "sources"),
    [
        (None, 1, 8, 1),  # not measured yet: one source, so the first outputs come soon
        (0.5, 1, 8, 8),  # 10 sources fit in 20 s: at most batch_size
        (0.1, 1, 8, 2),
        (0.01, 1, 8, 1),  # slower than one source per batch: still one
        (0.5, 3, 8, 3),  # three candidates per source: a third of the sources
    ],
)
def test_it_sizes_a_batch_by_the_models_speed(campaign, settings, speed, candidates, batch_size, sources):
    settings.PARASOL_GENERATION_BATCH_SECONDS = 20
    decoding = "sampling" if candidates > 1 else "greedy"
    run = create_run(
        campaign, sources=SOURCES, templates=["naive"], candidates=candidates, decoding=decoding, batch_size=batch_size
    )
    assert run.sources_per_batch(speed) == sources


def test_an_inline_run_starts_with_one_source_then_batches_by_time(campaign, fake):
    run = create_run(campaign, sources=SOURCES, templates=["naive"], batch_size=4)
    counted = []
    run.run_inline(progress=counted.append)
    # The fake answers at once: after the first source, each batch is as large as the run allows.
    assert [len(call) for call in fake.calls] == [1, 4, 2]
    assert counted == [1, 4, 2] and run.status == GenerationRun.Status.DONE


def test_the_workers_batches_are_sized_from_the_speed_they_recorded(campaign, fake, settings):
    settings.PARASOL_GENERATION_BATCH_SECONDS = 1
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        try:
            run = create_run(campaign, sources=SOURCES, templates=["naive"], batch_size=8)
            assert model_speed(run.model) is None and run.sources_per_batch(model_speed(run.model)) == 1
            generate_batch.run(run.pk, [run.sources.first().pk])  # records its speed as it ends
            assert model_speed(run.model) > 0
            record_speed("other", 0, 5.0)  # a batch that made nothing teaches no speed
            assert model_speed("other") is None
            record_speed("other", 3, 1.0)
            record_speed("other", 1, 1.0)
            assert model_speed("other") == 2.0 and run.sources_per_batch(model_speed("other")) == 2
        finally:
            servers.use_broker(*old)


def made_at(run, seconds_ago, now, n=1):
    """n outputs stored `seconds_ago` before `now`."""
    for source in run.sources.order_by("position")[:n]:
        output = GenerationOutput.objects.create(
            run=run, source=source, template="naive", raw_output="B:", text="", reject_reason="empty"
        )
        GenerationOutput.objects.filter(pk=output.pk).update(created_at=now - timedelta(seconds=seconds_ago))


def test_the_time_left_comes_from_the_recent_rate(campaign):
    now = timezone.now()
    run = create_run(campaign, sources=SOURCES[:5], templates=["naive"])
    GenerationRun.objects.filter(pk=run.pk).update(status="running", started_at=now - timedelta(seconds=40))
    run.refresh_from_db()
    made_at(run, 20, now, n=2)
    progress = run.progress(now=now)
    assert progress["rate"] == pytest.approx(2 / 40)
    assert progress["time_left"] == "60 s"  # 3 outputs left at one every 20 s


def test_a_stalled_run_gets_no_time_left(campaign, researcher_client):
    now = timezone.now()
    run = create_run(campaign, sources=SOURCES[:5], templates=["naive"])
    GenerationRun.objects.filter(pk=run.pk).update(status="running", started_at=now - timedelta(minutes=30))
    run.refresh_from_db()
    made_at(run, 15 * 60, now, n=2)  # outputs, but none in the last 10 minutes
    progress = run.progress(now=now)
    assert progress["rate"] == 0.0 and progress["time_left"] is None
    assert time_left(3, 0.0) is None and time_left(0, 1.0) is None and time_left(3, None) is None
    page = researcher_client.get(run.get_absolute_url()).content.decode()
    assert "No output in the last 10 minutes" in page and " left, at " not in page


def test_the_page_shows_the_time_left_while_outputs_come(campaign, researcher_client):
    run = create_run(campaign, sources=SOURCES[:5], templates=["naive"])
    now = timezone.now()
    GenerationRun.objects.filter(pk=run.pk).update(status="running", started_at=now - timedelta(seconds=60))
    made_at(run, 30, now, n=2)
    page = researcher_client.get(run.get_absolute_url()).content.decode()
    assert "2/5" in page and " left, at " in page and "outputs a minute lately" in page


def test_select_now_is_offered_only_when_the_selection_can_run(campaign, researcher_client, monkeypatch):
    monkeypatch.setattr(llm, "get_generator", lambda model: Varied())
    run = create_run(
        campaign, sources=SOURCES[:2], templates=["naive"], decoding="sampling", candidates=3, selection_metric="lev"
    )
    generate_batch(run.pk, list(run.sources.values_list("pk", flat=True)))
    run.refresh_from_db()
    url = run.get_absolute_url()
    stages = stage_progress(run)
    assert stages["waiting"] and not stages["can_select"]
    assert "queue" in stages["queue"]  # where the scores wait: the metric's queue, or why it cannot be read
    page = researcher_client.get(url).content.decode()
    assert "The selection waits: no lev scores yet for 6 of 6 candidates" in page and "Select now" not in page
    assert 'hx-trigger="every 2s"' in page  # the page follows the selection until it is done

    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    assert stage_progress(run)["can_select"]
    page = researcher_client.get(url).content.decode()
    assert "Select now" in page and "The selection waits" not in page
    researcher_client.post(reverse("generation-select-run", args=[campaign.slug, run.pk]))
    page = researcher_client.get(url).content.decode()
    assert "Select now" not in page and 'hx-trigger="every 2s"' not in page  # decided: nothing moves any more


def test_the_selection_says_where_its_scores_wait_in_their_queue(campaign, monkeypatch):
    monkeypatch.setattr(llm, "get_generator", lambda model: Varied())
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        try:
            options = {"decoding": "sampling", "candidates": 2, "selection_metric": "lev"}
            run = create_run(campaign, sources=SOURCES[:1], templates=["naive"], **options)
            generate_batch.run(run.pk, list(run.sources.values_list("pk", flat=True)))
            run.refresh_from_db()
            queues.client().rpush("cpu", "a", "b", "c")  # three tasks ahead in lev's queue
            assert stage_progress(run)["queue"].startswith("3 scoring task(s) wait in the 'cpu' queue")
        finally:
            servers.use_broker(*old)
