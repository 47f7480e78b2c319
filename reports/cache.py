"""Reports and their figures cached under a fingerprint of the data they are computed from.

A report is recomputed only when pairs, judgments or scores of its campaigns changed;
bumping ANALYSIS_VERSION drops every cached report after a change to the analysis.
"""

import hashlib
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Count, Max, Sum
from django.utils import timezone

from annotation.models import Judgment
from campaigns.models import Pair
from reports.analysis import build_report
from reports.figures import FigureSpec, draw_figure
from reports.frames import load_frames
from scoring.models import Score

ANALYSIS_VERSION = "1"  # bump when the analysis changes, to drop cached reports
CACHE_SECONDS = 7 * 24 * 3600


def fingerprint(campaigns) -> str:
    """Changes whenever a report of these campaigns could change."""
    pairs = Pair.objects.filter(campaign__in=campaigns, is_training=False).aggregate(
        n=Count("id"), last=Max("id"), gold=Sum("gold_label")
    )
    judgments = (
        Judgment.objects.filter(pair__campaign__in=campaigns)
        .counted()
        .aggregate(n=Count("id"), last=Max("id"), judges=Sum("judge_id"))
    )
    scores = Score.objects.filter(pair__campaign__in=campaigns).aggregate(
        n=Count("id"), last=Max("id"), at=Max("created_at")
    )
    parts = [ANALYSIS_VERSION, sorted(c.pk for c in campaigns), pairs, judgments, scores]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:20]


@dataclass
class CachedReport:
    report: object
    signatures: dict[str, str]
    computed_at: object
    key: str


def get_report(campaigns, label_source="human") -> CachedReport:
    """The report of `campaigns`, computed once per state of their data."""
    key = f"parasol-report:{label_source}:{fingerprint(campaigns)}"
    cached = cache.get(key)
    if cached is None:
        frames = load_frames(campaigns)
        report = build_report(frames.pairs, frames.judgments, frames.directions, label_source=label_source)
        report.notes = frames.notes + report.notes
        cached = CachedReport(report, frames.signatures, timezone.now(), key)
        cache.set(key, cached, CACHE_SECONDS)
    return cached


def figure_bytes(cached: CachedReport, spec: FigureSpec, fmt: str) -> bytes:
    """A figure of the report, drawn once per state of the data."""
    key = f"{cached.key}:{spec.name}:{fmt}"
    data = cache.get(key)
    if data is None:
        data = draw_figure(cached.report, spec, fmt)
        cache.set(key, data, CACHE_SECONDS)
    return data
