"""The report task and its queueing, in this process (a real worker: test_worker_report.py)."""

import pytest

from reports import cache
from reports.tasks import compute_report_task, report_or_status
from scoring import service
from tests.factories import add_pairs


@pytest.fixture
def gold_campaign(campaign):
    pairs = add_pairs(campaign, 12)
    for i, pair in enumerate(pairs):
        pair.gold_label = i % 2
        pair.save()
    service.score_pairs("lev", [pair.pk for pair in pairs])
    return campaign


def test_it_computes_the_report_into_the_cache_and_running_twice_changes_nothing(gold_campaign):
    key = compute_report_task([gold_campaign.pk], "gold")
    assert key == cache.report_key([gold_campaign], "gold")
    first = cache.cached_report(key)
    assert first.report.summary["n_pairs"] == 12
    assert compute_report_task([gold_campaign.pk], "gold") == key
    assert cache.cached_report(key).computed_at == first.computed_at  # served from the cache, not recomputed
    assert cache.computation_status(key) is None  # the lock is released


def test_it_returns_quietly_when_a_campaign_is_gone(gold_campaign):
    assert compute_report_task([gold_campaign.pk, gold_campaign.pk + 1000], "gold") is None


def test_a_report_being_computed_is_not_queued_again(gold_campaign, settings):
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 5
    key = cache.report_key([gold_campaign], "gold")
    assert cache.claim_computation(key) is not None  # as if a worker already had it
    assert cache.claim_computation(key) is None
    report, status = report_or_status([gold_campaign], "gold")
    assert report is None and status["stage"] == "queued for a worker"


def test_a_report_at_the_inline_limit_is_computed_in_the_request(gold_campaign, settings):
    settings.PARASOL_REPORT_INLINE_MAX_PAIRS = 12
    report, status = report_or_status([gold_campaign], "gold")
    assert status is None and report.report.summary["n_pairs"] == 12


@pytest.mark.parametrize(
    ("setting", "metadata"),
    [
        ("PARASOL_REPORT_INLINE_MAX_SYSTEMS", lambda i: {"system": f"s{i}"}),
        ("PARASOL_REPORT_INLINE_MAX_SYSTEM_COMPARISONS", lambda i: {"system": f"s{i}"}),
        ("PARASOL_REPORT_INLINE_MAX_GROUPS", lambda i: {"generator": f"g{i}"}),
    ],
)
def test_a_report_of_few_pairs_but_much_work_is_not_computed_in_the_request(campaign, settings, setting, metadata):
    pairs = add_pairs(campaign, 12)
    for i, pair in enumerate(pairs):
        pair.metadata = metadata(i)
        pair.gold_label = i % 2
        pair.save()
    assert cache.fits_in_request([campaign])
    setattr(settings, setting, 5)
    assert not cache.fits_in_request([campaign])
    key = cache.report_key([campaign], "gold")
    cache.claim_computation(key)  # as if queued already: nothing is sent to a broker here
    report, status = report_or_status([campaign], "gold")
    assert report is None and status["stage"] == "queued for a worker"
    assert cache.cached_report(key) is None


def test_many_corpora_count_as_groups(campaign, settings):
    for i, pair in enumerate(add_pairs(campaign, 6)):
        pair.corpus = "abc"[i % 3]
        pair.save()
    settings.PARASOL_REPORT_INLINE_MAX_GROUPS = 2
    assert not cache.fits_in_request([campaign])
    settings.PARASOL_REPORT_INLINE_MAX_GROUPS = 3
    assert cache.fits_in_request([campaign])
