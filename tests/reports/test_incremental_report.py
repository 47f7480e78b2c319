"""The live report (issue 29): reused steps and score columns give the tables a full computation gives,
and a change of one judgment or one score recomputes what reads it, and nothing else.

The fixture has ties everywhere: scores rounded to one decimal, judges split evenly on some pairs,
a metric that scored only part of the pairs, and two corpora.
"""

import io
import random

import pytest

from annotation.models import Assignment, Judgment
from campaigns.exports import write_csv
from campaigns.models import Pair, Score
from reports import cache as report_cache
from reports.analysis import TABLE_NAMES, build_report
from reports.frames import load_frames
from reports.machinery.loading import data_state, report_frames
from reports.machinery.store import Store
from tests.factories import make_judge, without_controls

ANSWERS = ("same_meaning", "mostly_same", "somewhat_different", "very_different", "dont_know")
METRICS = ("sbert", "bertscore", "meteor")
LABEL_STEPS = {"threshold_tables", "table1", "mixed_balanced", "table4", "auc_tables", "rank_correlations"}


@pytest.fixture
def live_campaign(campaign, shared_cache):
    return make_live_campaign(campaign)


def make_live_campaign(campaign):
    """40 pairs in two corpora with gold labels, 4 judges (even splits: ties), 3 metrics with tied scores."""
    without_controls(campaign)
    rng = random.Random(29)
    pairs = Pair.objects.bulk_create(
        Pair.build(
            campaign,
            external_id=f"x{i}",
            corpus="qqp" if i < 20 else "paws",
            source=f"The cat number {i} sat on the mat.",
            hypothesis=f"A cat {'sat' if i % 2 else 'slept'} on mat {i % 7}.",
            gold_label=int(i % 3 != 0),
        )
        for i in range(40)
    )
    for _ in range(4):
        judge = make_judge(campaign)
        for position, pair in enumerate(pairs, start=1):
            assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
            Judgment.objects.create(
                assignment=assignment, judge=judge, pair=pair, values={"answer": rng.choice(ANSWERS)}
            )
    for metric in METRICS:
        scored = pairs if metric != "meteor" else pairs[:30]  # meteor has scored part of them so far
        Score.objects.bulk_create(
            Score(pair=p, metric=metric, signature=f"metric:{metric}|fixture", value=round(rng.random(), 1))
            for p in scored
        )
    return campaign


def table_bytes(report) -> dict[str, bytes]:
    tables = {}
    for name in TABLE_NAMES:
        buffer = io.StringIO()
        write_csv(report.tables[name], buffer)
        tables[name] = buffer.getvalue().encode()
    return tables


def full(campaign, label_source):
    """The report computed from scratch: nothing kept, nothing reused (as the `report` command does)."""
    frames = load_frames([campaign])
    return build_report(
        frames.pairs, frames.judgments, frames.directions, answers=frames.answers, label_source=label_source
    )


def live(campaign, label_source, store=None):
    """The report as the page gets it (pairs, columns and steps reused from the cache), and its memory."""
    store = store or report_cache.report_store()
    read = report_frames([campaign], store=store, state=data_state([campaign], store))
    memory, frames = read.memory(store), read.frames
    report = build_report(
        frames.pairs, frames.judgments, frames.directions, answers=frames.answers, label_source=label_source,
        runner=memory,
    )  # fmt: skip
    return report, memory


def change_one_judgment(campaign):
    judgment = Judgment.objects.filter(pair__campaign=campaign, is_training=False).order_by("pk").first()
    judgment.values = {"answer": "very_different" if judgment.values["answer"] != "very_different" else "same_meaning"}
    judgment.save()
    # A counted change of state, as a judge's new answer is: a new judgment replaces the old one.
    Judgment.objects.filter(pk=judgment.pk).delete()
    Judgment.objects.create(
        assignment=judgment.assignment, judge=judgment.judge, pair=judgment.pair, values=judgment.values
    )


def change_one_score(campaign, metric):
    """A score recomputed: scores are never updated in place, a new row replaces the old one."""
    score = Score.objects.filter(pair__campaign=campaign, metric=metric).order_by("pk").first()
    value = round(1 - score.value, 1) if score.value != 0.5 else 0.9
    score.delete()
    Score.objects.create(pair=score.pair, metric=metric, signature=score.signature, value=value)


@pytest.mark.parametrize("label_source", ["human", "gold"])
def test_the_live_report_equals_a_full_computation_after_each_change(live_campaign, label_source):
    live(live_campaign, label_source)
    reused = []
    for change in (change_one_judgment, lambda c: change_one_score(c, "sbert")):
        change(live_campaign)
        report, memory = live(live_campaign, label_source)
        reused += memory.reused
        assert table_bytes(report) == table_bytes(full(live_campaign, label_source))
        assert report.notes == full(live_campaign, label_source).notes
    assert reused, "nothing was reused: the test would not test the reuse"


def test_a_changed_judgment_reruns_only_the_steps_that_read_judgments_on_gold_labels(live_campaign):
    before, _ = live(live_campaign, "gold")
    change_one_judgment(live_campaign)
    after, memory = live(live_campaign, "gold")
    # The steps keyed on the judgments (the human ceiling and the judges' competence hold each judge against the
    # others), and Table 2, which counts the judges' ties whatever the labels.
    assert set(memory.computed) == {
        "system_report",
        "judges_agreement",
        "by_group_and_level",
        "table2",
        "human_ceiling",
        "judge_competence",
    }
    assert LABEL_STEPS <= set(memory.reused)  # gold labels did not move: every metric's step is reused
    changed = {name for name, data in table_bytes(after).items() if data != table_bytes(before)[name]}
    assert changed and changed <= {
        *("labels", "agreement", "cohen", "by_english_level", "by_group", "systems", "table2"),
        *("human_ceiling", "judge_competence"),
    }
    assert not changed & {"table1", "table3", "table4", "eer", "auc", "auc_tests", "rank_correlation", "curves_rank"}


def test_a_changed_judgment_reruns_the_label_steps_on_human_labels(live_campaign):
    live(live_campaign, "human")
    change_one_judgment(live_campaign)
    _after, memory = live(live_campaign, "human")
    assert LABEL_STEPS <= set(memory.computed)  # the judgment moved a majority label (or a tie)


def test_a_changed_score_reruns_that_metrics_steps_and_the_steps_of_every_metric(live_campaign):
    before, _ = live(live_campaign, "gold")
    change_one_score(live_campaign, "bertscore")
    after, memory = live(live_campaign, "gold")
    # Per-metric steps run once (for bertscore); the other metrics' parts are reused.
    for step in ("threshold_tables", "table1"):
        assert memory.computed.count(step) == 1 and memory.reused.count(step) == 2
    assert {"judges_agreement", "table2"} <= set(memory.reused)  # they read no score
    changed = {name for name, data in table_bytes(after).items() if data != table_bytes(before)[name]}
    assert changed and not changed & {"labels", "agreement", "cohen", "table2", "by_english_level"}
    for name in changed & {"table1", "table3", "eer", "rank_correlation"}:  # tables with a row per metric
        rows_before = set(table_bytes(before)[name].decode().splitlines())
        rows_after = set(table_bytes(after)[name].decode().splitlines())
        assert {row.split(",")[0] for row in rows_before ^ rows_after} == {"bertscore"}


def test_a_new_score_is_added_to_the_kept_column_and_unchanged_columns_are_not_read(live_campaign):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    live(live_campaign, "gold")
    unscored = live_campaign.real_pairs.exclude(scores__metric="meteor").order_by("pk").first()
    Score.objects.create(pair=unscored, metric="meteor", signature="metric:meteor|fixture", value=0.4)
    with CaptureQueriesContext(connection) as queries:
        report, _memory = live(live_campaign, "gold")
    reads = [q["sql"] for q in queries.captured_queries if '"scoring_score"."value"' in q["sql"]]
    assert len(reads) == 1 and "meteor" in reads[0] and '"scoring_score"."id" >' in reads[0]  # the new score only
    assert report.summary["n_scored"]["meteor"] == 31
    assert table_bytes(report) == table_bytes(full(live_campaign, "gold"))


def test_the_kept_steps_outlive_the_process_that_computed_them(live_campaign, shared_cache):
    """A new cache backend over the same folder (as a restarted worker opens) finds every step."""
    from diskcache import DjangoCache

    live(live_campaign, "gold")
    _report, memory = live(live_campaign, "gold", store=Store(DjangoCache(str(shared_cache), {})))
    assert memory.reused and not memory.computed


def test_a_new_state_replaces_the_cached_report_of_the_old_one(live_campaign):
    """One report per campaign and label source is kept: a live campaign makes one per new judgment."""
    from django.core.cache import cache

    before = report_cache.get_report([live_campaign], "gold")
    other_labels = report_cache.get_report([live_campaign], "human")
    change_one_judgment(live_campaign)
    after = report_cache.get_report([live_campaign], "gold")
    assert after.key != before.key
    assert cache.get(before.key) is None and cache.get(after.key) is not None
    assert cache.get(other_labels.key) is not None  # another label source's report is another report
