"""Reports and their figures cached under the data version of their campaigns and the digest of their code.

A report is recomputed only when the database advanced the data version of one of its campaigns
(`reports.models.DataVersion`: any write to what it reads, whatever wrote it) or the code that
computes it changed; what it is made of (pairs, score columns, steps) is reused on the same terms
(`reports.machinery`). While a worker computes one (`reports.tasks`), a status entry beside its
key says how far it got.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from campaigns.models import Campaign, Pair
from parasol.queues import QUEUED
from reports.analysis import build_report
from reports.figures import FigureSpec, drawing
from reports.frames import report_work
from reports.machinery.digests import Digests, report_setting
from reports.machinery.loading import DataState, data_state, report_frames
from reports.machinery.store import CACHE_SECONDS, Store
from reports.models import DataVersion

STATUS_SECONDS = 3600  # a worker that dies mid-report frees the lock after this long
FAILED_STATUS_SECONDS = 60  # a report a worker gave up on says so this long, then is asked for again


def data_inputs(campaigns, state: DataState | None = None) -> tuple:
    """What a result computed from these campaigns' data depends on: their data versions (all parts)."""
    return state.versions if state is not None else DataVersion.of(campaigns)


def report_store() -> Store:
    """Where the live report keeps what it reuses (pairs, score columns, steps, signature groups)."""
    return Store()


@dataclass
class CachedReport:
    report: object
    signatures: dict[str, str]
    computed_at: object
    key: str


def report_key(campaigns, label_source, state: DataState | None = None) -> str:
    """The report's key: its campaigns' data versions, its labels, the code and its settings (`Store.key`)."""
    return Store.key("report", label_source, data_inputs(campaigns, state))


def cached_report(key) -> CachedReport | None:
    return cache.get(key)


def compute_report(campaigns, label_source="human", *, store=None, state=None, on_stage=None, workers=None, **options):
    """(report, frames): the one way a report is made, for the page, its worker and the `report` command.

    `store` (`reports.machinery.store.Store`, for the live page): pairs, score columns and the steps of
    earlier reports are reused where their inputs did not change; without it all is computed.
    `workers` (the command's `reports.machinery.workers.ReportWorkers`): they compute the edit distances and
    read the score columns while this process reads the pairs; then one process more than them computes the
    analysis's step groups at once (`ReportWorkers.step_processes`).
    `options`: the analysis `Settings` (seed, curve points...).
    """
    on_stage = on_stage or _quiet
    on_stage("reading pairs, judgments and scores")
    read = report_frames(campaigns, store=store, state=state, workers=workers)
    frames = read.frames
    on_stage(f"computing the tables ({len(frames.pairs):,} pairs, {len(frames.directions)} metrics)")
    memory = read.memory(store, workers.step_processes if workers is not None else 0)
    options.setdefault("ppi_predictor", _predictor_of(campaigns))
    report = build_report(
        frames.pairs,
        frames.judgments,
        frames.directions,
        answers=frames.answers,
        verdicts=frames.verdicts,
        label_source=label_source,
        runner=memory,
        **options,
    )
    report.notes = frames.notes + report.notes
    return report, frames


def _predictor_of(campaigns):
    """The estimates' predictor the campaigns' researchers chose (one for all of them), else None: cross-fitted."""
    chosen = {campaign.ppi_predictor for campaign in campaigns}
    return chosen.pop() or None if len(chosen) == 1 else None


def _quiet(text):
    """A stage nobody listens to."""


def get_report(campaigns, label_source="human", on_stage=None, state=None) -> CachedReport:
    """The report of `campaigns`, computed once per state of their data; `on_stage(text)` hears each step.

    `state`: the campaigns' `DataState`, when the caller has read it (it is read once per request).
    """
    state = state or data_state(campaigns, report_store())
    key = report_key(campaigns, label_source, state)
    cached = cache.get(key)
    if cached is None:
        store = report_store()
        cap = report_setting("PARASOL_REPORT_MAX_SYSTEM_COMPARISONS")
        report, frames = compute_report(
            campaigns, label_source, store=store, state=state, on_stage=on_stage, max_system_comparisons=cap
        )
        cached = CachedReport(report, frames.signatures, timezone.now(), key)
        (on_stage or _quiet)("storing the report")
        cache.set(key, cached, CACHE_SECONDS)
        _forget_superseded(campaigns, label_source, key)
    return cached


def _forget_superseded(campaigns, label_source, key):
    """Delete the report this one replaces (of the same campaigns and labels, an older state of their data):
    a live campaign makes one per new judgment, and nothing asks for an older state again."""
    cap = report_setting("PARASOL_REPORT_MAX_SYSTEM_COMPARISONS")
    pks = "-".join(str(pk) for pk in sorted(c.pk for c in campaigns))
    latest = f"parasol-report-latest:{label_source}:{cap}:{pks}"
    previous = cache.get(latest)
    if previous is not None and previous != key:
        cache.delete(previous)
    cache.set(latest, key, CACHE_SECONDS)


def n_real_pairs(campaigns) -> int:
    return Pair.objects.filter(campaign__in=campaigns, is_training=False, is_control=False).count()


def fits_in_request(campaigns) -> bool:
    """Whether a report of `campaigns` is small enough to compute inline: pairs, systems, their comparisons, groups.

    The pairs are counted first: beyond their bound the rest is not even read.
    """
    if n_real_pairs(campaigns) > settings.PARASOL_REPORT_INLINE_MAX_PAIRS:
        return False
    work = report_work(campaigns)
    n = work["systems"]
    comparisons = min(n * (n - 1) // 2, report_setting("PARASOL_REPORT_MAX_SYSTEM_COMPARISONS"))
    return (
        n <= settings.PARASOL_REPORT_INLINE_MAX_SYSTEMS
        and comparisons <= settings.PARASOL_REPORT_INLINE_MAX_SYSTEM_COMPARISONS
        and work["groups"] <= settings.PARASOL_REPORT_INLINE_MAX_GROUPS
    )


def _status_key(key):
    return f"{key}:computing"


def claim_computation(key) -> dict | None:
    """The new status entry if this caller is the first to ask for the report (it is the lock); else None."""
    status = {"stage": QUEUED, "started": timezone.now()}
    return status if cache.add(_status_key(key), status, STATUS_SECONDS) else None


def computation_status(key) -> dict | None:
    """{stage, started} while a worker computes the report of `key`; None when none does."""
    return cache.get(_status_key(key))


def release_computation(key):
    cache.delete(_status_key(key))


def fail_computation(campaign_ids, label_source, reason):
    """Leave why a worker gave up on a report where its page reads it, for a minute; the next visit after asks again."""
    campaigns = sorted(Campaign.objects.filter(pk__in=campaign_ids), key=lambda c: list(campaign_ids).index(c.pk))
    if len(campaigns) == len(set(campaign_ids)):
        status = {"stage": "failed", "error": reason, "started": timezone.now()}
        cache.set(_status_key(report_key(campaigns, label_source)), status, FAILED_STATUS_SECONDS)


def compute_and_cache(campaign_ids, label_source) -> str | None:
    """Compute and cache a report (in a worker), leaving its stage where the page reads it; returns its key.

    Campaigns deleted meanwhile mean there is nothing to compute (None).
    """
    campaigns = list(Campaign.objects.filter(pk__in=campaign_ids))
    if len(campaigns) != len(set(campaign_ids)):
        return None
    campaigns.sort(key=lambda c: campaign_ids.index(c.pk))
    key = report_key(campaigns, label_source)
    started = (computation_status(key) or {}).get("started", timezone.now())

    def on_stage(text):
        cache.set(_status_key(key), {"stage": text, "started": started}, STATUS_SECONDS)

    try:
        return get_report(campaigns, label_source, on_stage=on_stage).key
    finally:
        release_computation(key)


def figure_bytes(cached: CachedReport, spec: FigureSpec, fmt: str) -> bytes:
    """A figure of the report, drawn once per state of what it draws (not per state of the report:
    a new judgment leaves the figures against gold labels alone). Keyed, as a report step is, on the drawing
    function and the digests of the very arguments it is called with (`reports.figures.drawing`)."""
    draw, args, kwargs = drawing(cached.report, spec)
    called = f"{draw.__module__}.{draw.__qualname__}"
    digests = Digests()
    key = Store.key("figure", called, fmt, digests.of(list(args)), digests.of(dict(sorted(kwargs.items()))))
    return cache.get_or_set(key, lambda: draw(*args, fmt=fmt, **kwargs), CACHE_SECONDS)
