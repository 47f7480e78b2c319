"""Pairs and judgments downloads are streamed in chunks and say the same as the whole-table export."""

import io

import pytest
from django.urls import reverse

from campaigns.exports import write_csv
from campaigns.importers import import_pairs
from reports import exports
from reports.exports import judgments_frame, pairs_with_scores
from scoring import service
from tests.reports.test_exports import CASES, CORPUS, answer, judge


@pytest.fixture
def judged(campaign):
    """Six pairs answered by four judges (the cases of test_exports)."""
    import_pairs(campaign, CORPUS, filename="corpus.csv")
    pairs = {pair.external_id: pair for pair in campaign.real_pairs}
    judges = [judge(campaign) for _ in range(4)]
    for pair_id, (answers, _, _) in CASES.items():
        for position, (someone, label) in enumerate(zip(judges, answers, strict=False), start=1):
            answer(someone, pairs[pair_id], label, position=position + int(pair_id[1:]) * 10)
    return campaign


@pytest.fixture
def tiny_chunks(monkeypatch):
    monkeypatch.setattr(exports, "EXPORT_CHUNK_ROWS", 2)


def whole_csv(frame):
    buffer = io.StringIO()
    write_csv(frame, buffer)
    return buffer.getvalue().encode()


def download(client, researcher, name, slug):
    client.force_login(researcher)
    response = client.get(reverse(name, args=[slug]))
    assert response.status_code == 200
    assert response.streaming
    chunks = list(response.streaming_content)
    return chunks, b"".join(chunks)


def test_the_pairs_download_streams_the_same_csv_as_the_whole_export(client, researcher, judged, tiny_chunks):
    ids = list(judged.real_pairs.values_list("pk", flat=True))
    service.score_pairs("lev", ids)
    service.score_pairs("bleu", ids[:3])  # a metric missing for some pairs leaves empty cells
    chunks, content = download(client, researcher, "reports-export-pairs", judged.slug)
    frame, _signatures = pairs_with_scores(judged)
    assert content == whole_csv(frame)
    assert len(chunks) == 1 + 3  # the header, then 6 pairs in chunks of 2
    assert content.startswith(b"pair_id,corpus,source,hypothesis,gold_label")


def test_the_judgments_download_streams_the_same_csv_as_the_whole_export(client, researcher, judged, tiny_chunks):
    chunks, content = download(client, researcher, "reports-export-judgments", judged.slug)
    frame = judgments_frame(judged)
    assert len(frame) > 4
    assert content == whole_csv(frame)
    assert len(chunks) == 1 + (len(frame) + 1) // 2


def test_outsiders_get_no_download(client, outsider, judged):
    client.force_login(outsider)
    assert client.get(reverse("reports-export-pairs", args=[judged.slug])).status_code == 302


def test_the_command_writes_the_same_csv_in_chunks(judged, tiny_chunks, tmp_path):
    from django.core.management import call_command

    service.score_pairs("lev", list(judged.real_pairs.values_list("pk", flat=True)))
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", judged.slug, "--out", str(out), stdout=io.StringIO())
    assert out.read_bytes() == whole_csv(pairs_with_scores(judged)[0])
