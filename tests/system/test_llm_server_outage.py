"""An LLM server that stops mid-batch under a real Celery worker: every stage waits, says so, and stores once.

A real llama.cpp server (the embedded SmolLM2 GGUF), real Redis, a real worker on the `gpu`, `served` and
`generation` queues. Each backend reaches the server through its own link that the test cuts after a
set number of answered requests (the next ones get no answer, as from a server stopped mid-batch) and
mends again: ParaPLUIE, both LLM judges and a generation run are each cut inside a batch, their
batches retried, and every pair ends with one score per metric, every candidate stored once.
"""

import json
import time

import pytest
from django.db import connection
from django.db.models import Count
from django.urls import reverse

from campaigns.models import Campaign, Pair, Score
from generation.models import GenerationRun
from generation.tasks import start_run
from metrics.backends import parse_backends
from metrics.loading import embedded_smollm2_path, model_revision
from parasol.queues import recent_events
from scoring.tasks import queue_scoring
from tests import servers
from tests.servers import CuttableLink, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

DEMO = [json.loads(line) for line in (servers.REPO / "fixtures" / "demo_pairs.jsonl").read_text().splitlines()]
# Where each stage's link is cut: inside its second batch of two pairs (ParaPLUIE: one request a pair; the
# vote: two), inside the checked judge's first batch, and between a generation batch's two templates.
CUTS = {"parapluie_direct": 3, "llm_vote": 5, "llm_checked": 3, "generation": 3}
METRICS = ["parapluie_direct", "llm_vote", "llm_checked"]
SOURCES = ["The cat sleeps on the sofa.", "It is raining in the city today.", "She reads a good book at night."]
WORKER_SETTINGS = {
    "PARASOL_METRICS": ",".join(METRICS),
    "PARASOL_SCORING_BATCH_SIZE": "2",
    "PARASOL_SCORE_ON_CREATE": "false",
    "PARASOL_LLM_BACKEND_WAIT_SECONDS": "1",
    "LLM_VOTE_K": "2",
    "LLM_CHECK_M": "1",
    "LLM_PROMPT": "one-word",
}


@pytest.fixture(scope="module")
def llama():
    with servers.llama_cpp_server(embedded_smollm2_path()) as url:
        yield url


@pytest.fixture
def links(llama):
    made = {stage: CuttableLink(llama, cut_after=cut) for stage, cut in CUTS.items()}
    yield made
    for link in made.values():
        link.close()


def declared_backends(links):
    """One backend per stage, each through its own link; no retries inside a batch, so the batch itself waits."""
    revision = model_revision(str(embedded_smollm2_path()))
    common = {"model": "smollm2", "revision": revision, "retries": 0, "max_concurrency": 2, "timeout": 120}
    return json.dumps({f"served-{stage}": {**common, "base_url": link.url} for stage, link in links.items()})


@pytest.fixture
def broker(settings, links, shared_cache):
    declared = declared_backends(links)
    settings.PARASOL_LLM_BACKENDS = parse_backends(declared)
    settings.PARASOL_METRICS = METRICS
    settings.PARASOL_SCORING_BATCH_SIZE = 2
    env = {**WORKER_SETTINGS, "PARASOL_LLM_BACKENDS": declared, "PARASOL_CACHE_DIR": str(shared_cache)}
    with servers.broker_with_worker(connection, queues="gpu,served,generation", extra_env=env) as (url, _worker):
        yield url


def scored_campaign(researcher):
    campaign = Campaign.objects.create(slug="served", name="Served", created_by=researcher)
    campaign.choose_llm_backends({metric: f"served-{metric}" for metric in METRICS})
    rows = [DEMO[0], DEMO[1], *[row for row in DEMO if row["label"] == 0][:2]]
    Pair.objects.bulk_create(
        Pair.build(campaign, external_id=row["id"], corpus="demo", source=row["source"], hypothesis=row["hypothesis"])
        for row in rows
    )
    return campaign


def waiting_rows(client, campaign):
    """The metrics whose row on the scoring panel says their batches wait for the server (once it answers again,
    the row keeps its last failure, in grey, without that word)."""
    page = client.get(reverse("scoring-show-progress", args=[campaign.slug])).content.decode()
    return {metric for metric in METRICS if f"its batches wait for <code>served-{metric}</code>" in page}


def test_every_llm_stage_waits_for_its_stopped_server_and_stores_each_result_once(broker, links, client, researcher):
    campaign = scored_campaign(researcher)
    queue_scoring(list(campaign.pairs.values_list("pk", flat=True)), metrics=METRICS, campaign_pk=campaign.pk)
    generated = Campaign.objects.create(slug="generated", name="Generated", created_by=researcher)
    run = start_run(
        generated, sources=SOURCES, templates=["naive", "naive-system"], model="served-generation", max_new_tokens=8
    )
    client.force_login(researcher)

    # Each stage, once its link is cut and its page says which backend is down, gets its link mended at once
    # (a batch's waits double: mending late would only make the test wait longer).
    def generation_waits():
        page = client.get(reverse("generation-show-run", args=[generated.slug, run.pk])).content.decode()
        if "backend &#x27;served-generation&#x27; is unreachable" not in page:
            return False
        run.refresh_from_db()
        assert run.status == GenerationRun.Status.RUNNING and run.error == ""
        # What was generated before the cut is kept, and the run is not done (batches are sized by source since
        # issue 50, so the cut may come after any source, whichever template it was on).
        assert 1 <= run.outputs.count() < 2 * len(SOURCES)
        return True

    says_it_waits = {metric: (lambda metric=metric: metric in waiting_rows(client, campaign)) for metric in METRICS}
    says_it_waits["generation"] = generation_waits

    def mend_each_stage_seen_waiting():
        for stage, link in links.items():
            if link.cut_after is not None and link.dropped and says_it_waits[stage]():
                link.mend()
        return all(link.cut_after is None for link in links.values())

    started = time.monotonic()
    assert wait_until(mend_each_stage_seen_waiting, timeout=600, interval=0.5), {
        stage: (link.forwarded, link.dropped, link.cut_after) for stage, link in links.items()
    }
    all_seen = time.monotonic() - started
    complete = len(METRICS) * campaign.pairs.count()
    assert wait_until(lambda: Score.objects.filter(pair__campaign=campaign).count() >= complete, timeout=600)
    assert wait_until(lambda: GenerationRun.objects.get(pk=run.pk).status == "done", timeout=300)

    scores = Score.objects.filter(pair__campaign=campaign)
    assert scores.count() == complete
    assert not scores.values("pair", "metric").annotate(n=Count("pk")).filter(n__gt=1).exists()
    outputs = run.outputs.all()
    assert outputs.count() == 2 * len(SOURCES)
    assert not outputs.values("source", "template", "candidate").annotate(n=Count("pk")).filter(n__gt=1).exists()
    # The retried generation batch asked only for what was missing: one request per output, none again.
    assert links["generation"].forwarded == 2 * len(SOURCES)
    assert generated.pairs.count() == outputs.filter(accepted=True).count()
    assert not [event for event in recent_events() if event["kind"] == "failed"]
    assert waiting_rows(client, campaign) == set()
    assert GenerationRun.objects.get(pk=run.pk).progress()["waiting"] is None
    dropped = {stage: link.dropped for stage, link in links.items()}
    print(f"\nevery stage seen waiting after {all_seen:.0f} s, all stored after {time.monotonic() - started:.0f} s;")
    print(f"requests dropped while cut: {dropped}")
