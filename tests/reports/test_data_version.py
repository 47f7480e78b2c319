"""The data version (issue 36 §2): advanced by the database on every write a report reads, whatever wrote it,
so the live report equals a report computed from scratch after a gold swap by `QuerySet.update` or a score
changed in raw SQL; and results are keyed on the digest of the code that computes them."""

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Judge, Judgment
from campaigns.models import Campaign, Pair, Score
from reports import cache as report_cache
from reports import data_version
from reports.machinery.digests import code_digest
from reports.models import PARTS, DataVersion
from tests.reports.test_incremental_report import full, make_live_campaign, table_bytes

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


def test_every_trigger_exists_once_every_migration_ran(db):
    """A later migration that makes SQLite rebuild one of the tables drops its triggers: this says so."""
    expected = {name for _table, name in data_version.triggers(connection.vendor)}
    assert expected <= data_version.existing_triggers(connection)
    assert data_version.missing_triggers(connection) == []


def test_the_campaign_trigger_watches_every_column_but_the_assignment_counter(db):
    """A column added to Campaign later must be added to the trigger (a new migration), or be declared ignored."""
    columns = {f.column for f in Campaign._meta.concrete_fields} - set(data_version.CAMPAIGN_COLUMNS_IGNORED)
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
        "a judgment's answer": (lambda: Judgment.objects.filter(pk=judgment.pk).update(values={"answer": "dont_know"})),
        "a judge excluded": (lambda: Judge.objects.filter(pk=judge.pk).update(excluded=True)),
        "a score in raw SQL": (lambda: _sql("UPDATE scoring_score SET value = value + 1 WHERE id = %s", [score.pk])),
        "a score added": (lambda: Score.objects.create(pair=pair, metric="lev", signature="metric:lev|new", value=0.5)),
        "a score deleted": (lambda: Score.objects.filter(pk=score.pk).delete()),
        "the system keys": (lambda: Campaign.objects.filter(pk=live_campaign.pk).update(system_keys="generator")),
        "a pair's scores deleted in raw SQL": (lambda: _sql("DELETE FROM scoring_score WHERE pair_id = %s", [pair.pk])),
    }
    expected = {
        "gold by QuerySet.update": {"pairs"},
        "a judgment's answer": {"judgments"},
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


def test_every_first_party_module_a_report_imports_is_in_the_code_digest(live_campaign):
    """The digest is not a hand list: whatever the report's computation imported from this project is hashed."""
    import sys

    from reports.machinery.digests import NOT_RUN, code_files, project_root
    from reports.task_sections.criteria import criteria_tables

    report_cache.get_report([live_campaign], "gold")
    criteria_tables([live_campaign])
    root, hashed = project_root(), set(code_files())
    imported = {
        Path(module.__file__)
        for module in list(sys.modules.values())
        if getattr(module, "__file__", None) and Path(module.__file__).is_relative_to(root)
    }
    ours = {path for path in imported if path.relative_to(root).parts[0] not in (*NOT_RUN, ".venv")}
    assert ours and ours <= hashed, sorted(ours - hashed)


def test_the_code_digest_changes_when_the_answer_scale_changes(tmp_path):
    """Flipping what an answer means (the scale's PARAPHRASE_OF_ANSWER) changes every report key."""
    import shutil

    from reports.machinery.digests import code_digest, code_files, first_party_packages, project_root

    root = project_root()
    for package in first_party_packages(root):
        shutil.copytree(root / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    before = code_digest.__wrapped__(tmp_path)
    assert before == code_digest()  # the copy is the code
    (scale,) = [p for p in code_files(tmp_path) if "PARAPHRASE_OF_ANSWER = " in p.read_text(encoding="utf-8")]
    text = scale.read_text(encoding="utf-8")
    scale.write_text(text.replace('"mostly_similar": 1', '"mostly_similar": 0', 1), encoding="utf-8")
    assert scale.read_text(encoding="utf-8") != text
    assert code_digest.__wrapped__(tmp_path) != before


def test_every_setting_a_report_reads_is_in_its_key(live_campaign, settings):
    """The Parasol settings read while a report is computed (its steps, PEM's tables) are those `report_setting`
    reads, which every key holds: a setting that changes a report changes its key."""
    from django.conf import settings as lazy

    from reports.machinery.digests import report_settings
    from reports.task_sections.criteria import criteria_tables

    read = set()

    class Recording:
        def __init__(self, wrapped):
            self.wrapped = wrapped

        def __getattr__(self, name):
            read.add(name)
            return getattr(self.wrapped, name)

    wrapped = lazy._wrapped
    cached = {name: value for name, value in lazy.__dict__.items() if name.isupper()}
    for name in cached:
        del lazy.__dict__[name]  # LazySettings keeps what was read: read it again, through the recorder
    lazy._wrapped = Recording(wrapped)
    try:
        report_cache.get_report([live_campaign], "human")
        criteria_tables([live_campaign])
    finally:
        lazy._wrapped = wrapped
    parasol = {name for name in read if name.startswith("PARASOL_")}
    assert parasol <= set(report_settings()), sorted(parasol - set(report_settings()))
    key = report_cache.report_key([live_campaign], "human")
    for name in report_settings():
        setattr(settings, name, ("another value than", getattr(settings, name)))
        assert report_cache.report_key([live_campaign], "human") != key, name
        key = report_cache.report_key([live_campaign], "human")


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


sqlite_only = pytest.mark.skipif("connection.vendor != 'sqlite'", reason="REPLACE and table rebuilds are SQLite's")
postgresql_only = pytest.mark.skipif("connection.vendor != 'postgresql'", reason="TRUNCATE is PostgreSQL's")


@sqlite_only
@pytest.mark.parametrize("statement", ["REPLACE INTO", "INSERT OR REPLACE INTO"])
def test_the_live_report_is_exact_after_replace_on_scores(live_campaign, statement):
    """SQLite's REPLACE deletes the row it replaces: with recursive triggers on (every connection), that counts."""
    before = live_tables(live_campaign, "gold")
    first = list(Score.objects.filter(pair__campaign=live_campaign, metric="sbert").order_by("pk")[:5])
    write = lambda: _sql(  # noqa: E731
        f"{statement} scoring_score (id, pair_id, metric, signature, value, details, created_at) "
        "SELECT id, pair_id, metric, signature, 1 - value, details, created_at FROM scoring_score WHERE id IN "
        f"({', '.join(str(score.pk) for score in first)})",
        [],
    )
    assert "scores_changed" in moved(live_campaign, write)
    after = live_tables(live_campaign, "gold")
    assert after == scratch_tables(live_campaign, "gold")
    assert after[0] != before[0]


@sqlite_only
def test_replace_on_the_unique_key_counts_too(live_campaign):
    """A REPLACE that collides on (pair, metric, signature) rather than the id: a new row, the old one deleted."""
    live_tables(live_campaign, "gold")
    score = Score.objects.filter(pair__campaign=live_campaign, metric="sbert").order_by("pk").first()
    write = lambda: _sql(  # noqa: E731
        "REPLACE INTO scoring_score (pair_id, metric, signature, value, created_at) "
        "SELECT pair_id, metric, signature, value + 5, created_at FROM scoring_score WHERE id = %s",
        [score.pk],
    )
    assert "scores_changed" in moved(live_campaign, write)
    assert live_tables(live_campaign, "gold") == scratch_tables(live_campaign, "gold")


@postgresql_only
@pytest.mark.django_db(
    transaction=True
)  # as an operator runs it: PostgreSQL refuses a TRUNCATE after writes in its transaction
def test_the_live_report_is_exact_after_truncate(live_campaign):
    """TRUNCATE fires no row trigger: its own statement triggers advance every campaign's part it empties."""
    before = live_tables(live_campaign, "human")
    assert moved(live_campaign, lambda: _sql("TRUNCATE annotation_judgment, scoring_score CASCADE", [])) >= {
        "judgments",
        "scores_changed",
    }
    after = live_tables(live_campaign, "human")
    assert after == scratch_tables(live_campaign, "human")
    assert after != before
    assert report_cache.get_report([live_campaign], "human").report.summary["n_judgments"] == 0


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_truncating_pairs_advances_them(live_campaign):
    assert "pairs" in moved(live_campaign, lambda: _sql("TRUNCATE campaigns_pair CASCADE", []))


@pytest.mark.django_db(transaction=True)
def test_migrating_back_and_forth_never_serves_the_report_cached_before(campaign, shared_cache):
    """`migrate reports zero`, a write, `migrate`, twice: the versions start at random, never where they were."""
    live = make_live_campaign(campaign)
    for _ in range(2):
        live_tables(live, "gold")  # cached
        call_command("migrate", "reports", "zero", verbosity=0)
        one = Pair.objects.filter(campaign=live, gold_label=1).order_by("pk").first()
        Pair.objects.filter(pk=one.pk).update(gold_label=0)
        call_command("migrate", verbosity=0)
        assert data_version.missing_triggers(connection) == []
        assert all(version for _pk, _part, version in DataVersion.of([live]))
        assert live_tables(live, "gold") == scratch_tables(live, "gold")


@pytest.fixture
def lost_score_triggers(transactional_db):
    """What a later migration's table rebuild does on SQLite (the schema editor's ALTER pattern): the table is
    made again and its triggers are gone. On PostgreSQL, a trigger dropped by hand. Made again after the test."""
    if connection.vendor == "sqlite":
        with connection.schema_editor() as editor:
            editor._remake_table(Score)  # noqa: SLF001 - the very rebuild an ALTER makes
    else:
        _sql("DROP TRIGGER parasol_version_scoring_score_insert ON scoring_score", [])
    yield
    with connection.schema_editor() as editor:
        data_version.remake(editor)


def test_a_table_rebuild_is_detected_and_named_with_how_to_restore(lost_score_triggers):
    missing = data_version.missing_triggers(connection)
    assert "parasol_version_scoring_score_insert" in missing
    with pytest.raises(SystemCheckError) as raised:
        call_command("check", "--deploy")
    assert "parasol_version_scoring_score_insert" in str(raised.value)
    assert "manage.py migrate" in str(raised.value)


def test_the_web_and_worker_processes_refuse_to_start_without_a_trigger(lost_score_triggers, capsys):
    from parasol.startup import EXIT_CODE
    from reports.data_version import data_version_or_exit

    with pytest.raises(SystemExit) as raised:
        data_version_or_exit()
    assert raised.value.code == EXIT_CODE
    assert "parasol_version_scoring_score_insert" in capsys.readouterr().err


def test_a_process_starts_with_every_trigger_there(db):
    from reports.data_version import data_version_or_exit

    data_version_or_exit()


def test_migrate_makes_the_lost_triggers_again(lost_score_triggers):
    campaign = Campaign.objects.create(slug="after", name="After")
    call_command("migrate", verbosity=0)
    assert data_version.missing_triggers(connection) == []
    pair = Pair.objects.create(campaign=campaign, source="a b", hypothesis="b a", external_id="after")
    write = lambda: Score.objects.create(pair=pair, metric="lev", signature="s", value=1)  # noqa: E731
    assert moved(campaign, write) == {"scores_added"}


def test_the_span_tables_are_kept_under_the_data_version_and_the_detector_cards_read_fresh(
    campaign, tmp_path, monkeypatch
):
    """The span report's tables (the page and every table download read them) are computed once per state of the
    data: a tagging changed in raw SQL shows at once, as a detector stored since does (its files, no data version)."""
    import json

    from annotation import assignment as assign
    from campaigns.importers import import_pairs
    from metrics.paratag import campaign_detectors_path
    from reports.task_sections.spans import span_tables
    from tests.factories import make_judge, without_controls

    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(tmp_path))
    campaign.task_type = "spans"
    campaign.save()
    import_pairs(campaign, b"id,source,hypothesis\np1,Anna bought a car,Anna got a car\np2,It rained,It poured\n")
    without_controls(campaign)
    for offset in (0, 1):
        judge = make_judge(campaign)
        for position, pair in enumerate(campaign.real_pairs.order_by("pk"), start=1):
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, {"source": [offset], "hypothesis": [1]})
    first = span_tables([campaign])
    assert first["span_detectors"].empty
    with CaptureQueriesContext(connection) as kept:
        again = span_tables([campaign])
    assert all(again[name].equals(first[name]) for name in first)
    # Kept: the second reading asks for the data versions only, not the judgments.
    assert not [q for q in kept.captured_queries if Judgment._meta.db_table in q["sql"]], kept.captured_queries

    judgment = Judgment.objects.filter(assignment__judge__campaign=campaign).order_by("pk").first()
    values = {**judgment.values, "source": [0, 1, 2]}
    _sql(f'UPDATE {Judgment._meta.db_table} SET "values" = %s WHERE id = %s', [json.dumps(values), judgment.pk])
    changed = span_tables([campaign])
    assert not changed["span_agreement"].equals(first["span_agreement"])  # the raw write shows

    version = campaign_detectors_path(campaign.pk) / "0001-test"
    version.mkdir(parents=True)
    figures = {"n_pairs": 2, "word_accuracy": 0.5, "span_f1": 0.4, "kappa": 0.1}
    manifest = {"encoder": "toy", "test": figures, "baselines": {"tag_different_words": {"span_f1": 0.2}}}
    (version / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with_detector = span_tables([campaign])
    assert list(with_detector["span_detectors"]["detector"]) == ["0001-test"]
    assert with_detector["span_agreement"].equals(changed["span_agreement"])


def test_the_real_pairs_count_and_bounds_are_kept_under_the_pairs_version(live_campaign):
    """`data_state` scans the pairs' index once per state of the pairs (0.16 s of every live page at 400,000 pairs):
    a page that changes nothing asks no pair again, and a pair made a control in raw SQL shows at once."""
    from reports.machinery.loading import data_state

    first = data_state([live_campaign], report_cache.report_store())
    with CaptureQueriesContext(connection) as kept:
        again = data_state([live_campaign], report_cache.report_store())
    assert again.pk_range == first.pk_range
    assert not [q for q in kept.captured_queries if Pair._meta.db_table in q["sql"]], kept.captured_queries

    last = live_campaign.real_pairs.order_by("pk").last()
    table = Pair._meta.db_table
    _sql(f"UPDATE {table} SET is_control = %s WHERE id = %s", [True, last.pk])
    shrunk = data_state([live_campaign], report_cache.report_store()).pk_range
    assert shrunk != first.pk_range and shrunk == report_cache.data_state([live_campaign]).pk_range
    assert live_tables(live_campaign, "human") == scratch_tables(live_campaign, "human")
