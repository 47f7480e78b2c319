"""The data version (issue 36 §2): advanced by the database on every write a report reads, whatever wrote it,
so the live report equals a report computed from scratch after a gold swap by `QuerySet.update` or a score
changed in raw SQL; and results are keyed on the digest of the code that computes them."""

import importlib

import pytest
from django.db import connection, transaction

from annotation.models import Judge, Judgment
from campaigns.models import Campaign, Pair
from reports import cache as report_cache
from reports.machinery.digests import code_digest
from reports.models import PARTS, DataVersion
from scoring.models import Score
from tests.reports.test_incremental_report import full, make_live_campaign, table_bytes

TRIGGERS = importlib.import_module("reports.migrations.0001_data_version_triggers")
UPDATE_TRIGGER = "parasol_version_campaigns_campaign_update"


@pytest.fixture
def live_campaign(campaign, shared_cache):
    return make_live_campaign(campaign)


def versions(campaign) -> dict[str, int]:
    return {part: version for _pk, part, version in DataVersion.of([campaign])}


def moved(campaign, write) -> set[str]:
    """The parts of the campaign's data version that `write()` advanced."""
    before = versions(campaign)
    write()
    after = versions(campaign)
    return {part for part in PARTS if after[part] != before[part]}


def live_tables(campaign, label_source):
    """The report the page serves (`get_report`: the cache, its pairs, columns and steps), as CSV bytes and notes."""
    cached = report_cache.get_report([campaign], label_source)
    return table_bytes(cached.report), cached.report.notes


def scratch_tables(campaign, label_source):
    report = full(campaign, label_source)
    return table_bytes(report), report.notes


def existing_triggers() -> set[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        return {name for (name,) in cursor.fetchall()}


def test_every_trigger_exists_once_every_migration_ran(db):
    """A later migration that makes SQLite rebuild one of the tables drops its triggers: this says so."""
    expected = {TRIGGERS._name(table, event) for table, event in TRIGGERS.TRIGGERS}
    assert expected <= existing_triggers()


def test_the_campaign_trigger_watches_every_column_but_the_assignment_counter(db):
    """A column added to Campaign later must be added to the trigger (a new migration), or be declared ignored."""
    columns = {f.column for f in Campaign._meta.concrete_fields} - set(TRIGGERS.CAMPAIGN_COLUMNS_IGNORED)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = %s", [UPDATE_TRIGGER])
        else:
            cursor.execute("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = %s", [UPDATE_TRIGGER])
        (definition,) = cursor.fetchone()
    watched = definition.split("UPDATE OF", 1)[1].split(" ON ", 1)[0]
    assert columns == {column.strip() for column in watched.split(",")}


def test_a_new_campaign_gets_its_versions(campaign):
    assert all(version is not None for _pk, _part, version in DataVersion.of([campaign]))
    assert DataVersion.objects.filter(campaign=campaign).count() == len(PARTS)


def test_each_write_advances_the_part_it_changes_and_only_in_its_campaign(live_campaign):
    other = Campaign.objects.create(slug="other", name="Other")
    pair = Pair.objects.filter(campaign=live_campaign).order_by("pk").first()
    judgment = Judgment.objects.filter(pair__campaign=live_campaign).order_by("pk").first()
    score = Score.objects.filter(pair__campaign=live_campaign).order_by("pk").first()
    judge = Judge.objects.filter(campaign=live_campaign).order_by("pk").first()
    writes = {
        "gold by QuerySet.update": (lambda: Pair.objects.filter(pk=pair.pk).update(gold_label=1 - pair.gold_label)),
        "a judgment's label": (lambda: Judgment.objects.filter(pk=judgment.pk).update(label="dont_know")),
        "a judge excluded": (lambda: Judge.objects.filter(pk=judge.pk).update(excluded=True)),
        "a score in raw SQL": (lambda: _sql("UPDATE scoring_score SET value = value + 1 WHERE id = %s", [score.pk])),
        "a score added": (lambda: Score.objects.create(pair=pair, metric="lev", signature="metric:lev|new", value=0.5)),
        "a score deleted": (lambda: Score.objects.filter(pk=score.pk).delete()),
        "the system keys": (lambda: Campaign.objects.filter(pk=live_campaign.pk).update(system_keys="generator")),
        "a pair's scores deleted in raw SQL": (lambda: _sql("DELETE FROM scoring_score WHERE pair_id = %s", [pair.pk])),
    }
    expected = {
        "gold by QuerySet.update": {"pairs"},
        "a judgment's label": {"judgments"},
        "a judge excluded": {"judgments"},
        "a score in raw SQL": {"scores_changed"},
        "a score added": {"scores_added"},
        "a score deleted": {"scores_changed"},
        "the system keys": {"pairs"},
        "a pair's scores deleted in raw SQL": {"scores_changed"},
    }
    for name, write in writes.items():
        before_other = versions(other)
        assert moved(live_campaign, write) == expected[name], name
        assert versions(other) == before_other, name


def test_an_assignment_leaves_the_versions_alone(live_campaign):
    """Every assignment bumps the campaign's `assignment_seq`: that must not drop the cached pairs."""
    write = lambda: Campaign.objects.filter(pk=live_campaign.pk).update(assignment_seq=7)  # noqa: E731
    assert moved(live_campaign, write) == set()


def _sql(statement, params):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


@pytest.mark.parametrize("label_source", ["human", "gold"])
def test_the_live_report_is_exact_after_a_gold_swap_by_queryset_update(live_campaign, label_source):
    live_tables(live_campaign, label_source)  # cached
    one, zero = (Pair.objects.filter(campaign=live_campaign, gold_label=gold).order_by("pk").first() for gold in (1, 0))
    Pair.objects.filter(pk=one.pk).update(gold_label=0)  # no save(), no signal: the trigger alone sees it
    Pair.objects.filter(pk=zero.pk).update(gold_label=1)
    assert live_tables(live_campaign, label_source) == scratch_tables(live_campaign, label_source)


@pytest.mark.parametrize("label_source", ["human", "gold"])
def test_the_live_report_is_exact_after_a_score_changed_in_raw_sql(live_campaign, label_source):
    before = live_tables(live_campaign, label_source)
    table = Score._meta.db_table
    _sql(f"UPDATE {table} SET value = 1 - value WHERE metric = %s", ["sbert"])  # same count, same newest id
    after = live_tables(live_campaign, label_source)
    assert after == scratch_tables(live_campaign, label_source)
    assert after[0] != before[0]  # the change shows: the test would catch a stale report


def test_cached_results_are_keyed_on_the_code_digest(live_campaign):
    cached = report_cache.get_report([live_campaign], "gold")
    assert cached.key.endswith(code_digest())
    assert cached.key == report_cache.report_key([live_campaign], "gold")  # the same key, with or without the state
    assert report_cache.report_store().key("pairs", ((live_campaign.pk, "pairs", 1),)).endswith(code_digest())


def test_the_code_digest_covers_the_analysis_and_the_reader():
    from reports.machinery.digests import CODE, _source_files

    files = {path.name for dotted in CODE for path in _source_files(dotted)}
    assert {"frames.py", "digests.py", "memory.py", "loading.py", "ranking.py", "layouts.py", "service.py"} <= files


def test_the_scorers_bulk_insert_advances_only_the_campaigns_it_wrote_to(live_campaign):
    """`store_scores` (every scoring batch: one prepared INSERT per chunk of rows) moves only its campaign's part."""
    from scoring.service import store_scores

    other = Campaign.objects.create(slug="other", name="Other")
    Pair.objects.create(campaign=other, source="a b", hypothesis="b a")
    pks = list(Pair.objects.filter(campaign=live_campaign).values_list("pk", flat=True))
    before_other = versions(other)
    write = lambda: store_scores("lev", "metric:lev|batch", pks, [0.5] * len(pks))  # noqa: E731
    assert moved(live_campaign, write) == {"scores_added"}
    assert versions(other) == before_other
    assert Score.objects.filter(signature="metric:lev|batch").count() == len(pks)


def test_the_live_report_is_exact_after_a_scoring_batch(live_campaign):
    from scoring.service import store_scores

    live_tables(live_campaign, "gold")  # cached
    pks = list(Pair.objects.filter(campaign=live_campaign).order_by("pk").values_list("pk", flat=True))
    Score.objects.filter(pair__campaign=live_campaign, metric="sbert").delete()
    store_scores("sbert", "metric:sbert|again", pks, [(pk % 7) / 7 for pk in pks])
    assert live_tables(live_campaign, "gold") == scratch_tables(live_campaign, "gold")


INSERT_SCORE = "INSERT INTO scoring_score (pair_id, metric, signature, value, created_at) VALUES (%s, 'x', 'y', 1, 'z')"


def _seal():
    from reports.models import ScoreSeal

    return ScoreSeal.objects.values_list("lo", "hi", "holder_id").get()


@pytest.mark.skipif("connection.vendor != 'sqlite'", reason="only SQLite seals: PostgreSQL counts a batch once")
def test_a_sealed_batch_is_counted_and_leaves_no_seal_behind(live_campaign):
    """`store_scores` on SQLite seals its pairs' range: its campaign's `scores_added` moves, the seal is gone after,
    and a score inserted in raw SQL once the batch is over counts through the trigger again."""
    from scoring.service import store_scores

    pks = list(Pair.objects.filter(campaign=live_campaign).order_by("pk").values_list("pk", flat=True))
    assert moved(live_campaign, lambda: store_scores("lev", "metric:lev|sealed", pks, [0.5] * len(pks))) == {
        "scores_added"
    }
    assert _seal() == (None, None, None)
    assert moved(live_campaign, lambda: _sql(INSERT_SCORE, [pks[0]])) == {"scores_added"}


@pytest.mark.skipif("connection.vendor != 'sqlite'", reason="only SQLite seals")
def test_under_a_seal_every_campaign_owning_a_pair_in_the_range_is_counted(live_campaign):
    """Another campaign's pair inside the sealed range: a score on it written under the seal still moves its
    version (the seal advances every campaign in the range), and a pair outside the range counts by its trigger."""
    from reports.models import ScoreSeal

    inside = Campaign.objects.create(slug="inside", name="Inside")
    outside = Campaign.objects.create(slug="outside", name="Outside")
    a, b = (Pair.objects.create(campaign=inside, source=f"s{i}", hypothesis="h", external_id=str(i)) for i in range(2))
    far = Pair.objects.create(campaign=outside, source="far", hypothesis="h", external_id="far")
    own = Pair.objects.create(campaign=live_campaign, source="own", hypothesis="h", external_id="own")
    before = {c.slug: versions(c) for c in (inside, outside)}
    with transaction.atomic(), ScoreSeal.counting([a.pk, own.pk]):
        _sql(INSERT_SCORE, [b.pk])
        _sql(INSERT_SCORE, [far.pk])
    assert versions(inside)["scores_added"] != before["inside"]["scores_added"]
    assert versions(outside)["scores_added"] != before["outside"]["scores_added"]
    assert _seal() == (None, None, None)


@pytest.mark.skipif("connection.vendor != 'sqlite'", reason="only SQLite seals")
@pytest.mark.django_db(transaction=True)
def test_a_seal_is_not_committed_and_one_committed_all_the_same_hides_no_score(campaign):
    """With foreign keys on (Django's SQLite connections) the COMMIT of a seal fails on its deferred foreign key.
    With them off, a committed seal is undone by the next reader of a version, which then sees a new one: the
    score inserted under it counts. (A `flush` between tests deletes the seal row: the first batch makes it.)"""
    from django.db import IntegrityError

    from reports.models import ScoreSeal

    pair = Pair.objects.create(campaign=campaign, source="a b", hypothesis="b a", external_id="sealed")
    ScoreSeal.objects.update_or_create(pk=1, defaults={"lo": None, "hi": None, "holder": None})
    with pytest.raises(IntegrityError), transaction.atomic():
        ScoreSeal.objects.update(lo=pair.pk, hi=pair.pk, holder_id=0)
    assert _seal() == (None, None, None)
    before = versions(campaign)
    with connection.constraint_checks_disabled():
        ScoreSeal.objects.update(lo=pair.pk, hi=pair.pk, holder_id=0)
        _sql(INSERT_SCORE, [pair.pk])  # under the committed seal: its trigger skips it
    after = versions(campaign)
    assert after["scores_added"] != before["scores_added"]
    assert _seal() == (None, None, None)


@pytest.mark.skipif("connection.vendor != 'sqlite'", reason="only SQLite seals")
def test_a_batch_makes_the_seal_row_again_after_a_flush(live_campaign):
    from reports.models import ScoreSeal
    from scoring.service import store_scores

    ScoreSeal.objects.all().delete()
    pks = list(Pair.objects.filter(campaign=live_campaign).order_by("pk").values_list("pk", flat=True))
    assert moved(live_campaign, lambda: store_scores("lev", "metric:lev|resealed", pks, [0.5] * len(pks))) == {
        "scores_added"
    }
    assert _seal() == (None, None, None)


def test_a_figure_is_drawn_again_when_what_it_draws_changes_and_only_then(live_campaign, monkeypatch):
    """A figure's key is its drawing function and the digests of the arguments it is drawn from
    (`reports.figures.drawing`): nothing listed by hand, so a score changed in SQL redraws the curves."""
    import functools

    from reports import figures

    def thresholds(report):
        return next(spec for spec in figures.figure_specs(report) if spec.kind == "thresholds")

    cached = report_cache.get_report([live_campaign], "gold")
    first = report_cache.figure_bytes(cached, thresholds(cached.report), "png")

    @functools.wraps(figures.curves_figure)
    def never(*args, **kwargs):
        raise AssertionError("drawn again with nothing changed")

    with monkeypatch.context() as patch:
        patch.setattr(figures, "curves_figure", never)
        cached = report_cache.get_report([live_campaign], "gold")
        assert report_cache.figure_bytes(cached, thresholds(cached.report), "png") == first
    _sql("UPDATE scoring_score SET value = (pair_id %% 7) / 7.0", [])
    cached = report_cache.get_report([live_campaign], "gold")
    again = report_cache.figure_bytes(cached, thresholds(cached.report), "png")
    assert again == figures.draw_figure(full(live_campaign, "gold"), thresholds(cached.report), "png") != first
