"""Scoring cost per batch must not grow with the scores already stored (it was quadratic in the corpus)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaigns.models import Score
from scoring import service
from tests.factories import add_pairs

BATCH = 10


def store_fake_scores(pairs, metric):
    signature = service.scorer(metric).signature_string()
    Score.objects.bulk_create(Score(pair=pair, metric=metric, signature=signature, value=0.5) for pair in pairs)


def score_one_batch(pairs):
    """Queries run and SQLite virtual-machine steps taken to score one batch with `lev`."""
    ids = [pair.pk for pair in pairs]
    steps = [0]

    def count_step():
        steps[0] += 1
        return 0

    raw = connection.connection
    sqlite = connection.vendor == "sqlite"  # steps are SQLite's; PostgreSQL counts queries only
    if sqlite:
        raw.set_progress_handler(count_step, 100)
    try:
        with CaptureQueriesContext(connection) as queries:
            assert service.score_pairs("lev", ids) == len(ids)
    finally:
        if sqlite:
            raw.set_progress_handler(None, 0)
    return len(queries.captured_queries), steps[0]


@pytest.fixture
def pairs(campaign):
    return add_pairs(campaign, 2 * BATCH + 3000)


def test_it_runs_the_same_queries_per_batch_however_many_scores_exist(pairs):
    connection.ensure_connection()
    queries_empty, _ = score_one_batch(pairs[:BATCH])
    store_fake_scores(pairs[2 * BATCH :], "lev")
    queries_full, _ = score_one_batch(pairs[BATCH : 2 * BATCH])
    assert queries_empty == queries_full
    # One select of the missing pairs and the bulk insert (a few chunks of rows on SQLite): no query per pair.
    assert queries_full <= (5 if connection.vendor == "sqlite" else 2)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="counts SQLite virtual-machine steps")
def test_a_batch_does_not_scan_the_existing_scores(pairs):
    connection.ensure_connection()
    _, steps_empty = score_one_batch(pairs[:BATCH])
    store_fake_scores(pairs[2 * BATCH :], "lev")
    _, steps_full = score_one_batch(pairs[BATCH : 2 * BATCH])
    # Scanning the 3,000 stored scores would take thousands of steps more (hundreds of handler calls).
    assert steps_full < 2 * steps_empty + 20, (steps_empty, steps_full)


def test_the_inline_campaign_scoring_pages_through_missing_pairs_only(campaign, settings):
    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 7
    pairs = add_pairs(campaign, 30)
    service.score_pairs("lev", [pair.pk for pair in pairs[5:12]])
    seen = []
    assert service.score_campaign_inline(campaign, "lev", progress=seen.append) == 23
    assert seen == [7, 7, 7, 2]
    assert Score.objects.filter(metric="lev").count() == 30
    assert service.score_campaign_inline(campaign, "lev") == 0


def test_debugs_query_log_stays_one_batch_long_while_scoring_a_campaign(campaign, settings, monkeypatch):
    """With DEBUG on, `score --inline` keeps only the last batch's statements, whatever the corpus size."""
    from django.db import reset_queries

    settings.DEBUG = True
    monkeypatch.setattr(service, "batch_size", lambda metric: BATCH)
    add_pairs(campaign, 5 * BATCH)
    reset_queries()
    assert service.score_campaign_inline(campaign, "lev") == 5 * BATCH
    assert 0 < len(connection.queries) < 5, "the log kept the statements of every batch"
