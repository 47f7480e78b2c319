from datetime import timedelta

import pandas as pd
import pytest
from django.core.management import call_command

from annotation.models import Assignment, Judgment
from campaigns.models import Campaign, Pair, Score
from reports import frames as frames_module
from reports.frames import (
    latest_metric_scores,
    load_frames,
    metric_columns,
    pair_pk_range,
    pairs_frame,
    read_edit_distances,
    split_pk_range,
)
from scoring import service
from tests.factories import add_pairs, make_judge


@pytest.fixture
def pairs(campaign):
    return add_pairs(campaign, 5)


def test_a_new_signature_rescores_without_mixing(pairs):
    ids = [pair.pk for pair in pairs]
    service.score_pairs("lev", ids)
    stale = Score.objects.filter(pair=pairs[0]).get()
    Score.objects.filter(pk=stale.pk).update(
        signature="metric:lev|version:0", created_at=stale.created_at - timedelta(days=1)
    )
    scores = latest_metric_scores([pairs[0].campaign])
    assert scores.signatures == {"lev": service.scorer("lev").signature_string()}
    by_pair = scores.wide["lev"]
    assert by_pair.get(pairs[0].pk) is None or by_pair.isna()[pairs[0].pk]
    assert by_pair.notna().sum() == 4
    assert "ignored metric:lev|version:0 (1 scores)" in scores.notes[0]


def test_the_export_gains_one_column_per_metric(pairs, tmp_path):
    service.score_inline([pair.pk for pair in pairs], ["lev", "bleu"])
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", "demo", "--out", str(out))

    frame = pd.read_csv(out)
    assert list(frame.columns[-2:]) == ["lev", "bleu"]
    assert frame["lev"].notna().all()
    signatures = (tmp_path / "pairs.csv.signatures.txt").read_text()
    assert "lev\tmetric:lev" in signatures and "bleu\tmetric:bleu" in signatures


def judge_pair(judge, pair, answer, position, is_training=False):
    assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
    return Judgment.objects.create(
        assignment=assignment, judge=judge, pair=pair, values={"answer": answer}, is_training=is_training
    )


@pytest.fixture
def two_campaigns(campaign, researcher):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    mine, theirs = add_pairs(campaign, 2, corpus=""), add_pairs(other, 1, corpus="web")
    Score.objects.create(pair=mine[0], metric="lev", signature="metric:lev|version:1", value=3.0)
    Score.objects.create(pair=theirs[0], metric="rouge", signature="metric:rouge|version:1", value=0.5)
    judge, excluded = make_judge(campaign), make_judge(campaign)
    excluded.excluded = True
    excluded.save()
    judge_pair(judge, mine[0], "same_meaning", 1)
    judge_pair(excluded, mine[1], "very_different", 1)
    return campaign, other, judge


def test_it_reads_several_campaigns_into_the_report_frames(two_campaigns):
    campaign, other, judge = two_campaigns
    frames = load_frames([campaign, other])
    pairs = frames.pairs.set_index("pair_id")
    assert list(pairs.index) == ["demo:p1", "demo:p2", "other:p1"]
    assert list(pairs["corpus"]) == ["demo", "demo", "web"]  # no corpus: the campaign's slug
    assert pairs.loc["demo:p1", "lev"] == 3.0 and pd.isna(pairs.loc["other:p1", "lev"])
    assert frames.directions == {"lev": "lower", "rouge": "higher"}
    assert "rouge is not a registered metric: assumed higher-is-closer." in frames.notes
    # The excluded judge's answer does not count; the answer's vote and rating are the similarity type's.
    assert frames.judgments.to_dict("records") == [
        {
            "pair_id": "demo:p1",
            "judge": judge.pseudonym,
            "english_level": "good",
            "answer": "same_meaning",
            "vote": 1.0,
            "abstained": False,
            "rating": 4.0,
        }
    ]


def test_metric_columns_are_keyed_by_the_public_pair_id(two_campaigns):
    campaign, _other, _judge = two_campaigns
    columns, signatures = metric_columns(campaign)
    assert columns.to_dict("records") == [{"pair_id": "p1", "lev": 3.0}]
    assert signatures == {"lev": "metric:lev|version:1"}


def test_edit_distances_read_elsewhere_by_pk_range_are_those_read_with_the_pairs(campaign):
    """The `report` command's workers compute the edit distances over parts of the pk range (`read_edit_distances`)
    while it reads the pairs without their hypotheses: the frame is the one read in one go."""
    pairs = add_pairs(campaign, 7)
    Pair.objects.filter(pk=pairs[2].pk).update(hypothesis="Something else entirely, and longer.")
    campaign.ensure_training_pairs()  # pairs of the campaign that are not the report's: never read as its pairs
    whole, pks = pairs_frame([campaign], hypotheses=False)
    span = pair_pk_range([campaign])
    parts = split_pk_range(span, 3)
    assert parts[0][0] == span[0] and parts[-1][1] == span[1]
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))  # consecutive, no pk twice or left out
    read = pd.concat([read_edit_distances(part) for part in parts])
    assert sorted(read.index) == sorted(pks)
    assert read.reindex(pks).tolist() == whole["edit_distance"].tolist()
    assert len(set(whole["edit_distance"])) == 2  # six pairs alike and one not: the distances are read, not made up
    elsewhere, same_pks = pairs_frame([campaign], hypotheses=False, edit_distances=lambda: read)
    assert "hypothesis" not in elsewhere and list(same_pks) == list(pks)
    pd.testing.assert_frame_equal(elsewhere, whole)


def test_pairs_the_edit_distances_read_elsewhere_lack_are_computed_here(campaign, monkeypatch):
    """Pairs added after the pk range was read (an import meanwhile) are not in the distances the workers computed:
    theirs are computed from their sentences, a bounded number per query, never left empty."""
    monkeypatch.setattr(frames_module, "LACKING_PER_QUERY", 2)
    add_pairs(campaign, 3)
    before = pd.concat([read_edit_distances(part) for part in split_pk_range(pair_pk_range([campaign]), 2)])
    Pair.objects.bulk_create(
        Pair.build(campaign, external_id=f"late{i}", corpus="test", source="A b c.", hypothesis="A b c."[:i])
        for i in range(5)
    )
    frame, _pks = pairs_frame([campaign], hypotheses=False, edit_distances=lambda: before)
    late = frame.set_index("pair_id")["edit_distance"]
    assert late["late0"] == 1.0  # every character of the source deleted
    assert late["late4"] == pytest.approx(2 / 6)  # "A b " of "A b c.": two of six characters deleted
    assert late[["late1", "late2", "late3"]].tolist() == pytest.approx([5 / 6, 4 / 6, 3 / 6])
    assert frame["edit_distance"].notna().all() and len(frame) == 8
