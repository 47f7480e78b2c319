"""A generation run whose server backend does not answer waits, says so, and fails only for other reasons.

The server here is a port nothing listens on (connection refused); tests/scoring/test_llm_server_retries.py
stops a real llama.cpp server mid-batch under a real Celery worker.
"""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from generation import llm
from generation.models import GenerationRun, create_run
from generation.tasks import generate_batch
from metrics.backends import BackendUnavailable, parse_backends
from parasol import llm_backends
from tests.servers import closed_port

pytestmark = pytest.mark.django_db

SOURCES = ["The cat sleeps on the sofa.", "It is raining today."]


@pytest.fixture
def gone_server(settings):
    """A declared server backend whose port refuses connections, retried once without waiting."""
    with closed_port() as port:
        declared = {"base_url": f"http://127.0.0.1:{port}/v1", "model": "smollm2", "retries": 1, "backoff": 0}
        settings.PARASOL_LLM_BACKENDS = parse_backends(json.dumps({"lab": declared}))
        llm.get_generator.cache_clear()
        yield "lab"
        llm.get_generator.cache_clear()


@pytest.fixture
def run(campaign, gone_server):
    return create_run(campaign, sources=SOURCES, templates=["naive"], model=gone_server, max_new_tokens=8)


def source_pks(run):
    return list(run.sources.values_list("pk", flat=True))


def test_a_batch_whose_server_is_down_raises_for_a_retry_and_leaves_the_run_running(run):
    with pytest.raises(BackendUnavailable, match="'lab' is unreachable"):
        run.generate_batch(source_pks(run))
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.RUNNING and run.error == ""
    assert not run.outputs.exists()
    assert "'lab' is unreachable" in run.progress()["waiting"]


def test_the_runs_page_and_the_api_say_it_waits_for_its_server(client, researcher, campaign, run):
    with pytest.raises(BackendUnavailable):
        run.generate_batch(source_pks(run))
    client.force_login(researcher)
    page = client.get(reverse("generation-show-run", args=[campaign.slug, run.pk])).content.decode()
    assert 'id="generation-waiting"' in page and "backend &#x27;lab&#x27; is unreachable" in page
    api = client.get(f"/api/generations/{run.pk}/").json()
    assert api["status"] == "running" and "'lab' is unreachable" in api["progress"]["waiting"]


def test_the_note_goes_once_the_server_answers_and_a_finished_run_never_waits(run, gone_server):
    with pytest.raises(BackendUnavailable):
        run.generate_batch(source_pks(run))
    llm_backends.note_answered(gone_server)
    assert run.progress()["waiting"] is None
    llm_backends.note_down(BackendUnavailable("LLM backend 'lab' is unreachable", gone_server))
    run.cancel()
    assert run.progress()["waiting"] is None  # only an active run waits


def test_run_eagerly_the_task_leaves_the_run_queued_for_a_resume_and_tries_nothing_again(run):
    result = generate_batch.apply(args=[run.pk, source_pks(run)])
    assert result.successful() and result.result == 0
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.QUEUED and run.error == ""
    assert "'lab' is unreachable" in run.progress()["waiting"]


def test_the_inline_command_says_the_server_is_down_and_leaves_the_run_queued(campaign, gone_server, tmp_path):
    sources = tmp_path / "sources.txt"
    sources.write_text("\n".join(SOURCES))
    with pytest.raises(CommandError, match="'lab' is unreachable.*stays queued: resume it"):
        call_command("generate", campaign.slug, str(sources), "--template", "naive", "--model", gone_server, "--inline")
    run = GenerationRun.objects.get(campaign=campaign)
    assert run.status == GenerationRun.Status.QUEUED and not run.outputs.exists()


def test_another_error_still_fails_the_run_with_its_reason(run, monkeypatch):
    def answer_without_choices(generator, prompts, **options):
        raise KeyError("choices")  # a server that answered something unexpected

    monkeypatch.setattr(llm.ServerGenerator, "generate", answer_without_choices)
    with pytest.raises(KeyError):
        run.generate_batch(source_pks(run))
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.FAILED and "KeyError" in run.error
    assert run.progress()["waiting"] is None
