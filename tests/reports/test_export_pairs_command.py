import csv
import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.models import Answer, Assignment, Judge, Judgment
from campaigns.importers import import_pairs
from reports.exports import JUDGMENT_COLUMNS, PAIR_COLUMNS


@pytest.fixture
def judged(campaign):
    import_pairs(campaign, b"id,source,hypothesis,label\nq1,A.,B.,1\nq2,C.,D.,0\n")
    judge = Judge.objects.create(campaign=campaign, consented_at=timezone.now(), english_level="good")
    pair = campaign.pairs.get(external_id="q1")
    assignment = Assignment.objects.create(judge=judge, pair=pair, position=1, top="hypothesis")
    Judgment.objects.create(
        assignment=assignment, judge=judge, pair=pair, values={"answer": Answer.SAME_MEANING}, response_ms=900
    )
    return campaign


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_it_writes_the_pairs_csv(judged, tmp_path):
    out = io.StringIO()
    path = tmp_path / "pairs.csv"

    call_command("export_pairs", judged.slug, "--out", str(path), stdout=out)

    rows = read_csv(path)
    assert list(rows[0]) == PAIR_COLUMNS
    assert [(row["pair_id"], row["n_same_meaning"], row["paraphrase"]) for row in rows] == [
        ("q1", "1", "1"),
        ("q2", "0", ""),
    ]
    assert f"Wrote 2 pairs of campaign 'demo' to {path}" in out.getvalue()


def test_it_writes_the_judgments_csv(judged, tmp_path):
    path = tmp_path / "judgments.csv"

    call_command("export_pairs", judged.slug, "--out", str(path), "--judgments", stdout=io.StringIO())

    rows = read_csv(path)
    assert list(rows[0]) == JUDGMENT_COLUMNS
    assert [(row["pair_id"], row["label"], row["top_sentence"], row["response_ms"]) for row in rows] == [
        ("q1", "same_meaning", "hypothesis", "900")
    ]


def test_it_writes_to_standard_output(judged):
    out = io.StringIO()

    call_command("export_pairs", judged.slug, "--out", "-", stdout=out)

    assert out.getvalue().splitlines()[0] == ",".join(PAIR_COLUMNS)
    assert len(out.getvalue().splitlines()) == 3


def test_it_refuses_an_unknown_campaign(db, tmp_path):
    with pytest.raises(CommandError, match="No campaign with slug 'nope'"):
        call_command("export_pairs", "nope", "--out", str(tmp_path / "x.csv"))

    assert not (tmp_path / "x.csv").exists()


def test_a_generation_campaigns_pairs_csv_has_its_provenance(tmp_path, monkeypatch, db):
    from generation import llm
    from tests.generation.test_generation_run import FakeGenerator

    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator())
    sources = tmp_path / "sources.txt"
    sources.write_text("It is raining today.\nThe cat sleeps on the sofa.\n", encoding="utf-8")
    call_command("generate", "gen", str(sources), "--template", "naive", "--create", "--inline", stdout=io.StringIO())
    path = tmp_path / "g.csv"

    call_command("export_pairs", "gen", "--out", str(path), stdout=io.StringIO())

    rows = read_csv(path)
    assert len(rows) == 2
    assert {"generator", "generator_revision", "template", "decoding", "candidate", "generation_run"} <= set(rows[0])
    assert {(row["generator"], row["template"]) for row in rows} == {("embedded", "naive")}


def test_the_finished_file_gets_the_mode_any_new_file_gets(judged, tmp_path):
    """Written through a temporary file, the export still follows the umask (not tempfile's owner-only 0600)."""
    import os
    import stat

    previous = os.umask(0o022)
    try:
        path = tmp_path / "pairs.csv"
        call_command("export_pairs", judged.slug, "--out", str(path), stdout=io.StringIO())
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
