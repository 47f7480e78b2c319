"""Span taggings out (JSONL per judgment, aggregate columns in the pairs CSV) and pre-tagged pairs in."""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation import assignment as assign
from campaigns.importers import CorpusImportError, import_pairs
from reports.exports import pairs_frame, tagging_lines
from tests.factories import make_judge, without_controls

CORPUS = b'{"id": "a", "source": "The red car stopped.", "hypothesis": "The car stopped suddenly."}\n'


@pytest.fixture
def spans_campaign(campaign):
    campaign.task_type = "spans"
    campaign.save()
    import_pairs(campaign, CORPUS)
    return without_controls(campaign)


def tag(judge, pair, source=(), hypothesis=()):
    assignment = judge.assignments.create(pair=pair, position=judge.assignments.count() + 1, top="source")
    assign.record_judgment(assignment, {"source": list(source), "hypothesis": list(hypothesis)})


def test_the_jsonl_export_holds_each_judges_tokens_and_tags(spans_campaign):
    pair = spans_campaign.real_pairs.get()
    first, second = make_judge(spans_campaign), make_judge(spans_campaign)
    tag(first, pair, source=[1])
    tag(second, pair, source=[1], hypothesis=[3])
    lines = [json.loads(line) for line in tagging_lines(spans_campaign)]
    assert lines[0] == {
        "pair_id": "a",
        "judge": first.pseudonym,
        "is_training": False,
        "is_control": False,
        "judge_excluded": False,
        "source_tokens": ["The", "red", "car", "stopped", "."],
        "source_tags": [0, 1, 0, 0, 0],
        "hypothesis_tokens": ["The", "car", "stopped", "suddenly", "."],
        "hypothesis_tags": [0, 0, 0, 0, 0],
        "predicted": False,  # a judge's tagging; the span detector's lines say True
    }
    assert lines[1]["hypothesis_tags"] == [0, 0, 0, 1, 0]


def test_the_pairs_csv_holds_the_majority_tagging(spans_campaign):
    pair = spans_campaign.real_pairs.get()
    judges = [make_judge(spans_campaign) for _ in range(3)]
    tag(judges[0], pair, source=[1], hypothesis=[3])
    tag(judges[1], pair, source=[1])
    tag(judges[2], pair, source=[1, 2])
    row = pairs_frame(spans_campaign).iloc[0]
    assert row["n_taggings"] == 3
    assert row["source_tagged_words"] == "red"
    assert row["hypothesis_tagged_words"] == ""
    assert row["source_tagged_share"] == pytest.approx(1 / 5)
    assert row["tagged_share"] == pytest.approx(1 / 10)


def test_export_pairs_spans_writes_the_file_and_the_page_serves_it(spans_campaign, tmp_path, client, researcher):
    pair = spans_campaign.real_pairs.get()
    tag(make_judge(spans_campaign), pair, hypothesis=[0, 3])
    out = tmp_path / "taggings.jsonl"
    call_command("export_pairs", spans_campaign.slug, "--spans", "--out", str(out))
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["hypothesis_tags"] for line in written] == [[1, 0, 0, 1, 0]]
    client.force_login(researcher)
    page = client.get(reverse("reports-export-taggings", args=[spans_campaign.slug]))
    assert page.content.decode().splitlines() == out.read_text().splitlines()
    api = client.get(f"/api/campaigns/{spans_campaign.slug}/export/?kind=taggings")
    assert api.content == page.content


def test_an_exported_tagging_imports_as_a_pre_tagged_pair(spans_campaign):
    pair = spans_campaign.real_pairs.get()
    tag(make_judge(spans_campaign), pair, source=[1])
    line = json.loads(tagging_lines(spans_campaign)[0])
    record = {"id": "b", "source": pair.source, "hypothesis": pair.hypothesis, **line}
    del record["pair_id"]
    import_pairs(spans_campaign, json.dumps(record).encode())
    imported = spans_campaign.pairs.get(external_id="b")
    assert imported.gold_tags == {"source": [0, 1, 0, 0, 0], "hypothesis": [0, 0, 0, 0, 0]}
    assert "source_tags" not in imported.metadata


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        ({"source_tags": [0, 1], "hypothesis_tags": [0, 0, 0, 0, 0]}, "source_tags has 2 tags but the source has 5"),
        ({"source_tags": [0, 2, 0, 0, 0], "hypothesis_tags": [0] * 5}, "a list of 0 and 1"),
        ({"source_tags": [0] * 5}, "without the other sentence's tags"),
        ({"source_tags": [0] * 5, "hypothesis_tags": [0] * 5, "source_tokens": ["x"]}, "differ from Parasol's words"),
    ],
)
def test_a_bad_pre_tagged_pair_imports_nothing(spans_campaign, tags, message):
    record = {"id": "c", "source": "The red car stopped.", "hypothesis": "The car stopped suddenly.", **tags}
    with pytest.raises(CorpusImportError, match=message):
        import_pairs(spans_campaign, json.dumps(record).encode())
    assert not spans_campaign.pairs.filter(external_id="c").exists()
