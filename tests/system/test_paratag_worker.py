"""Metric `paratag` scored by a real Celery worker on queue `gpu`, read back by the report and the export.

The detector here is an untrained one (the MiniLM encoder and a seeded head), stored as a
real version: the worker path is under test, not the detector's quality (tests/reports/
test_span_detector.py trains one). Expected values come from the same metric in this process.
"""

import io

import pandas as pd
import pytest
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from metrics.loading import embedded_minilm_path
from metrics.paratag import build_detector, campaign_detectors_path
from metrics.paratag_training import store
from reports.cache import get_report
from scoring import service
from tests import servers
from tests.system.test_worker_integration import broker, redis_url  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

CORPUS = (
    b'{"id": "a", "source": "Anna bought the big car on Monday.", "hypothesis": "Anna purchased the large car.",'
    b' "label": 1}\n'
    b'{"id": "b", "source": "Tom fixed the lamp.", "hypothesis": "Tom repaired the old lamp on Friday.", "label": 0}\n'
    b'{"id": "c", "source": "Lena sold the boat.", "hypothesis": "Lena sold the boat.", "label": 1}\n'
    b'{"id": "d", "source": "Omar saw a clock.", "hypothesis": "Nina saw the table.", "label": 0}\n'
)


@pytest.fixture
def detector_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(tmp_path))
    service.scorer.cache_clear()
    yield tmp_path
    service.scorer.cache_clear()


def store_untrained_detector(root, campaign):
    """An untrained detector stored as the campaign's own first version."""
    import torch

    torch.manual_seed(3)
    tokenizer, detector = build_detector(embedded_minilm_path())
    manifest = {"campaign": campaign.slug, "encoder": "all-MiniLM-L6-v2 (untrained head)"}
    store(tokenizer, detector, manifest, campaign_detectors_path(campaign.pk, root), "test")


def test_a_gpu_worker_scores_a_campaign_with_paratag_for_the_report_and_the_export(
    broker,  # noqa: F811
    detector_dir,
    settings,
    client,
    django_user_model,
):
    settings.PARASOL_SCORE_ON_CREATE = False
    settings.PARASOL_METRICS = ["paratag"]
    researcher = django_user_model.objects.create_user("r", password="pw-r-123456", is_staff=True)
    campaign = Campaign.objects.create(slug="tagged", name="Tagged", created_by=researcher)
    import_pairs(campaign, CORPUS)
    store_untrained_detector(detector_dir, campaign)
    env = {"PARASOL_METRICS": "paratag", "PARATAG_DETECTORS_DIR": str(detector_dir)}
    worker = servers.start_worker(broker, servers.database_env(connection), queues="gpu", extra_env=env)
    try:
        call_command("score", "tagged", "--metrics", "paratag", stdout=io.StringIO())
        # Until the scores are in, or the worker is gone (its own output, above, says why): never a wait on a dead one.
        servers.wait_until(lambda: Score.objects.count() >= 4 or worker.poll() is not None, timeout=600, interval=0.2)
        assert worker.poll() is None, f"the worker exited ({worker.returncode}) with {Score.objects.count()} scores"
        assert Score.objects.count() >= 4, f"{Score.objects.count()} scores after 600 s, expected 4"
    finally:
        servers.stop(worker)
    stored = {pair.external_id: pair for pair in campaign.real_pairs}
    scores = {s.pair.external_id: s for s in Score.objects.filter(metric="paratag").select_related("pair")}
    assert set(scores) == set(stored)
    ids = sorted(stored)
    expected, details = service.scorer_for("paratag", campaign).score_with_details(
        sources=[stored[i].source for i in ids], hypotheses=[stored[i].hypothesis for i in ids]
    )
    for pair_id, value, detail in zip(ids, expected, details, strict=True):
        assert scores[pair_id].value == pytest.approx(value, abs=1e-4)
        assert scores[pair_id].details["tags"] == detail["tags"]
        assert f"detector:campaign-{campaign.pk}/0001-test" in scores[pair_id].signature
    report = get_report([campaign], "gold").report
    assert "paratag" in report.tables["table1"].to_string()
    client.force_login(researcher)
    export = client.get(reverse("reports-export-pairs", args=["tagged"]))
    frame = pd.read_csv(io.StringIO(b"".join(export.streaming_content).decode()), comment="#")
    assert frame["paratag"].notna().all() and "paratag_details" in frame
