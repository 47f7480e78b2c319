"""The pairs export of every task type, with no judgments, some and all, from the page, the API and the command.

Each path must give every pair exactly once, with its count of judgments; a failure midway must
never look like a complete file (issue 25).
"""

import csv
import io
import logging

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import assignment as assign
from campaigns.task_types import get_task_type
from reports import exports
from tests.factories import add_pairs, make_judge, without_controls
from tests.toys import every_task_type

N_PAIRS = 5
# similarity+spans' answer whose majority tagging a test reads word by word.
TAGGED = {"answer": "same_meaning", "source": [1], "hypothesis": [0, 2]}
# How many pairs get judged: none, some (the first two) or all of them.
COVERAGE = {"none": 0, "partial": 2, "complete": N_PAIRS}
JUDGES = 3


@pytest.fixture
def tiny_pages(monkeypatch):
    """Pages of two pairs: the stream holds several pages, judged and unjudged pairs on the same page."""
    monkeypatch.setattr(exports, "EXPORT_CHUNK_ROWS", 2)


def example_answer(task_type):
    """The type's example answer as its form hands it to `record_judgment`."""
    checker = get_task_type(task_type)
    form = checker.answer_form({"assignment": "1", **checker.example_answer()})
    assert form.is_valid(), form.errors
    return checker.answer(form.cleaned_data)


def judged_campaign(campaign, task_type, coverage, answer=None):
    campaign.task_type = task_type
    campaign.save()
    without_controls(campaign)
    pairs = add_pairs(campaign, N_PAIRS)
    answer = answer or example_answer(task_type)
    for _ in range(JUDGES):
        judge = make_judge(campaign)
        for position, pair in enumerate(pairs[: COVERAGE[coverage]], start=1):
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, answer)
    return campaign


def page_download(client, researcher, campaign, tmp_path):
    client.force_login(researcher)
    response = client.get(reverse("reports-export-pairs", args=[campaign.slug]))
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def api_download(client, researcher, campaign, tmp_path):
    client.force_login(researcher)
    response = client.get(f"/api/campaigns/{campaign.slug}/export/?kind=pairs")
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def command_export(client, researcher, campaign, tmp_path):
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", campaign.slug, "--out", str(out), stdout=io.StringIO())
    return out.read_text(encoding="utf-8")


PATHS = {"page": page_download, "api": api_download, "command": command_export}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("coverage", COVERAGE)
@every_task_type
def test_it_exports_every_pair_exactly_once(
    client, researcher, campaign, tmp_path, tiny_pages, task_type, coverage, path
):
    judged = judged_campaign(campaign, task_type, coverage)
    text = PATHS[path](client, researcher, judged, tmp_path)
    assert "EXPORT FAILED" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(row["pair_id"] for row in rows) == [f"p{i}" for i in range(1, N_PAIRS + 1)]
    # Every type's first pair column counts the pair's judgments (`TaskType.pair_columns`).
    count_column = get_task_type(task_type).pair_columns[0]
    counts = {row["pair_id"]: int(row[count_column]) for row in rows}
    assert counts == {f"p{i}": JUDGES if i <= COVERAGE[coverage] else 0 for i in range(1, N_PAIRS + 1)}


def test_the_span_results_of_a_judged_pair_are_the_majority_tagging(client, researcher, campaign, tmp_path):
    judged = judged_campaign(campaign, "similarity+spans", "partial", TAGGED)
    rows = {row["pair_id"]: row for row in csv.DictReader(io.StringIO(command_export(None, None, judged, tmp_path)))}
    assert rows["p1"]["source_tagged_words"] == "sentence"
    assert rows["p1"]["hypothesis_tagged_words"] == "Hypothesis number"
    assert rows["p1"]["majority_label"] == "same_meaning"
    assert rows["p3"]["source_tagged_words"] == "" and rows["p3"]["majority_label"] == ""


@pytest.fixture
def broken_second_page(monkeypatch, tiny_pages):
    """The export fails after its first page (as the span aggregation did): the stream is cut midway."""
    real = exports.pairs_frame
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise ValueError("zip() argument 2 is shorter than argument 1")
        return real(*args, **kwargs)

    monkeypatch.setattr(exports, "pairs_frame", failing)


@pytest.mark.parametrize("path", ["page", "api"])
def test_a_stream_cut_midway_ends_with_a_line_no_reader_takes_for_data(
    client, researcher, campaign, tmp_path, broken_second_page, caplog, path
):
    judged = judged_campaign(campaign, "similarity", "complete")
    with caplog.at_level(logging.ERROR, logger="campaigns.exports"):
        text = PATHS[path](client, researcher, judged, tmp_path)
    last = text.rstrip("\r\n").splitlines()[-1]
    assert last.startswith("# EXPORT FAILED") and "incomplete" in last
    assert "p1" in text and "p5" not in text
    assert any("zip() argument 2" in record.getMessage() or record.exc_info for record in caplog.records)


def test_a_command_cut_midway_exits_non_zero_and_leaves_no_file(campaign, tmp_path, broken_second_page):
    judged = judged_campaign(campaign, "similarity", "complete")
    out = tmp_path / "pairs.csv"
    with pytest.raises(CommandError, match="incomplete"):
        call_command("export_pairs", judged.slug, "--out", str(out), stdout=io.StringIO())
    assert list(tmp_path.iterdir()) == []


def test_a_failed_command_keeps_the_previous_complete_file(campaign, tmp_path, broken_second_page):
    judged = judged_campaign(campaign, "similarity", "complete")
    out = tmp_path / "pairs.csv"
    out.write_bytes(b"the previous export\r\n")
    with pytest.raises(CommandError):
        call_command("export_pairs", judged.slug, "--out", str(out), stdout=io.StringIO())
    assert out.read_bytes() == b"the previous export\r\n"
    assert [path.name for path in tmp_path.iterdir()] == ["pairs.csv"]
