"""Metric-vs-human reports of one or more campaigns: data loading, caching and the pages.

The statistics live in `campaigns.analysis` (plain pandas); this module reads the database
into its input frames, caches each computed report under a fingerprint of the data (so a
report is recomputed only when pairs, judgments or scores changed), and serves it.
"""

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pandas as pd
from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max, Sum
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from annotation.models import Judge, Judgment
from campaigns.analysis import LABEL_SOURCES, TABLE_NAMES, build_report, curves_figure, figure2
from campaigns.analysis.figures import FORMATS
from campaigns.analysis.present import SHOWN, TITLES, html
from campaigns.models import Campaign, Pair
from campaigns.views import campaign_for, csv_response, researcher_required
from scoring.metrics.registry import METRICS, get_metric_class
from scoring.models import Score
from scoring.service import latest_scores, signature_groups

ANALYSIS_VERSION = "1"  # bump when the analysis changes, to drop cached reports
CACHE_SECONDS = 7 * 24 * 3600
POLL_SECONDS = 20
COMPUTING_POLL_SECONDS = 2
STATUS_SECONDS = 3600  # a worker that dies mid-report frees the lock after this long
# Importing these metrics' modules loads torch or nltk: their direction is known without it.
DIRECTION_WITHOUT_IMPORT = {
    "meteor": "higher",
    "parapluie_direct": "higher",
    "parapluie_indirect": "higher",
    "parapluie_fs_direct": "higher",
}
METADATA_COLUMNS = ("generator", "template")


@dataclass
class Frames:
    """The analysis's inputs for a set of campaigns, and which signature each metric column uses."""

    pairs: pd.DataFrame
    judgments: pd.DataFrame
    directions: dict[str, str]
    signatures: dict[str, str]
    notes: list[str] = field(default_factory=list)


def metric_direction(name: str) -> str | None:
    """'higher' or 'lower' for a registered metric; None for a name the registry does not know."""
    if name in DIRECTION_WITHOUT_IMPORT:
        return DIRECTION_WITHOUT_IMPORT[name]
    if name not in METRICS:
        return None
    return get_metric_class(name).direction


def load_frames(campaigns) -> Frames:
    """Real pairs (with one column per metric), non-training judgments, metric directions and signatures."""
    campaigns = list(campaigns)
    several = len(campaigns) > 1
    slug_of = {c.pk: c.slug for c in campaigns}
    rows = Pair.objects.filter(campaign__in=campaigns, is_training=False, is_control=False).order_by(
        "campaign_id", "pk"
    )
    rows = rows.values_list(
        "pk", "campaign_id", "external_id", "corpus", "source", "hypothesis", "gold_label", "metadata"
    )
    records = []
    for pk, campaign_id, external_id, corpus, source, hypothesis, gold_label, metadata in rows:
        slug = slug_of[campaign_id]
        metadata = metadata if isinstance(metadata, dict) else {}
        records.append(
            (
                pk,
                f"{slug}:{external_id}" if several else external_id,
                corpus or slug,
                source,
                hypothesis,
                gold_label,
                *(metadata.get(key) for key in METADATA_COLUMNS),
            )
        )
    pairs = pd.DataFrame.from_records(
        records, columns=["pk", "pair_id", "corpus", "source", "hypothesis", "gold_label", *METADATA_COLUMNS]
    )
    pairs["gold_label"] = pairs["gold_label"].astype("Int64")
    pair_id_of_pk = pd.Series(pairs["pair_id"].to_numpy(), index=pairs["pk"].to_numpy())

    # Training answers, control items and excluded judges never reach a report.
    judgment_rows = (
        Judgment.objects.filter(pair__campaign__in=campaigns)
        .counted()
        .values_list("pair_id", "judge_id", "judge__english_level", "label")
    )
    judgments = pd.DataFrame.from_records(list(judgment_rows), columns=["pk", "judge", "english_level", "label"])
    judgments.insert(0, "pair_id", judgments["pk"].map(pair_id_of_pk))
    judgments["judge"] = [Judge(pk=pk).pseudonym for pk in judgments["judge"]]
    judgments = judgments.drop(columns="pk")

    scores, directions, signatures, notes = _scores(campaigns)
    if not scores.empty:
        wide = scores.pivot(index="pair_id", columns="metric", values="value")
        pairs = pairs.join(wide, on="pk")
    for metric in directions:
        if metric not in pairs:
            pairs[metric] = float("nan")
    return Frames(pairs.drop(columns="pk"), judgments, directions, signatures, notes)


def _scores(campaigns):
    """Score values of the most recent signature of each metric, in registry order."""
    scores = Score.objects.filter(pair__campaign__in=campaigns, pair__is_training=False, pair__is_control=False)
    notes = []
    for metric, (used, *others) in signature_groups(scores).items():
        if others:
            ignored = "; ".join(f"{g['signature']} ({g['n']} scores)" for g in others)
            notes.append(f"{metric}: using the most recent signature {used['signature']}; ignored {ignored}.")
    values, signatures = latest_scores(scores)
    directions = {}
    for metric in signatures:
        direction = metric_direction(metric)
        if direction is None:
            notes.append(f"{metric} is not a registered metric: assumed higher-is-closer.")
            direction = "higher"
        directions[metric] = direction
    frame = pd.DataFrame.from_records(values, columns=["pair_id", "metric", "value"])
    return frame, directions, signatures, notes


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


def _report_key(campaigns, label_source):
    return f"parasol-report:{label_source}:{fingerprint(campaigns)}"


def get_report(campaigns, label_source="human", on_stage=None) -> CachedReport:
    """The report of `campaigns`, computed once per state of their data; `on_stage(text)` hears each step."""
    key = _report_key(campaigns, label_source)
    cached = cache.get(key)
    if cached is None:
        on_stage = on_stage or (lambda text: None)
        on_stage("reading pairs, judgments and scores")
        frames = load_frames(campaigns)
        on_stage(f"computing the tables ({len(frames.pairs):,} pairs, {len(frames.directions)} metrics)")
        report = build_report(frames.pairs, frames.judgments, frames.directions, label_source=label_source)
        report.notes = frames.notes + report.notes
        cached = CachedReport(report, frames.signatures, timezone.now(), key)
        on_stage("storing the report")
        cache.set(key, cached, CACHE_SECONDS)
    return cached


def compute_report(campaign_ids, label_source):
    """Compute and cache a report in a worker, leaving its progress where the page can read it."""
    campaigns = list(Campaign.objects.filter(pk__in=campaign_ids))
    if len(campaigns) != len(set(campaign_ids)):
        return None
    campaigns.sort(key=lambda c: campaign_ids.index(c.pk))
    status_key = _status_key(_report_key(campaigns, label_source))
    started = (cache.get(status_key) or {}).get("started", timezone.now())

    def on_stage(text):
        cache.set(status_key, {"stage": text, "started": started}, STATUS_SECONDS)

    try:
        return get_report(campaigns, label_source, on_stage=on_stage).key
    finally:
        cache.delete(status_key)


def _status_key(key):
    return f"{key}:computing"


def report_or_status(campaigns, label_source):
    """(report, None) when ready; (None, status) while a worker computes it.

    Small reports are computed in the request; larger ones are handed to a worker once
    (the status entry is the lock) and the page polls until the report is in the cache.
    A broker that cannot be reached means the request computes it after all.
    """
    key = _report_key(campaigns, label_source)
    cached = cache.get(key)
    if cached is not None:
        return cached, None
    n_pairs = Pair.objects.filter(campaign__in=campaigns, is_training=False, is_control=False).count()
    if n_pairs <= settings.PARASOL_REPORT_INLINE_MAX_PAIRS:
        return get_report(campaigns, label_source), None
    status = {"stage": "queued for a worker", "started": timezone.now()}
    if cache.add(_status_key(key), status, STATUS_SECONDS):
        from campaigns.tasks import compute_report_task

        try:
            compute_report_task.apply_async(args=[[c.pk for c in campaigns], label_source], queue="cpu", retry=False)
        except Exception:  # the broker is down: compute here rather than wait for nobody
            cache.delete(_status_key(key))
            return get_report(campaigns, label_source), None
    return None, cache.get(_status_key(key)) or status


@dataclass
class FigureSpec:
    name: str  # in URLs and file names
    title: str
    kind: str  # figure2, thresholds or ranks
    corpus: str


def figure_specs(report) -> list[FigureSpec]:
    """Figure 2, then the threshold and rank curves of Global and of each corpus (numbered, as corpus names vary)."""
    specs = [FigureSpec("figure2", "Figure 2 — scores against the edit distance (all corpora)", "figure2", "Global")]
    for i, corpus in enumerate(["Global", *report.corpora]):
        specs.append(FigureSpec(f"thresholds-{i}", f"Rates by threshold — {corpus}", "thresholds", corpus))
        specs.append(FigureSpec(f"ranks-{i}", f"Rates by rank — {corpus}", "ranks", corpus))
    return specs


def draw_figure(report, spec: FigureSpec, fmt: str) -> bytes:
    if spec.kind == "figure2":
        return figure2(
            report.points,
            report.metrics,
            report.directions,
            corpus=spec.corpus,
            fmt=fmt,
            sampled_from=report.summary.get("n_points_sampled_from"),
        )
    x = "threshold" if spec.kind == "thresholds" else "rank"
    return curves_figure(report.tables[f"curves_{x}"], report.metrics, corpus=spec.corpus, x=x, fmt=fmt)


def figure_bytes(cached: CachedReport, name: str, fmt: str) -> bytes:
    """A figure of the report, drawn once per state of the data."""
    specs = {spec.name: spec for spec in figure_specs(cached.report)}
    if fmt not in FORMATS or name not in specs:
        raise Http404(f"No figure {name}.{fmt}")
    key = f"{cached.key}:{name}:{fmt}"
    data = cache.get(key)
    if data is None:
        data = draw_figure(cached.report, specs[name], fmt)
        cache.set(key, data, CACHE_SECONDS)
    return data


# Views.


def _campaigns_of(request, slug=None):
    if slug is not None:
        return [campaign_for(request, slug)]
    slugs = list(dict.fromkeys(request.GET.getlist("c")))
    campaigns = list(Campaign.objects.visible_to(request.user).filter(slug__in=slugs))
    if not slugs or len(campaigns) != len(slugs):
        raise Http404("Name one or more existing campaigns with ?c=slug.")
    return sorted(campaigns, key=lambda c: slugs.index(c.slug))


def _label_source(request):
    label_source = request.GET.get("label", "human")
    if label_source not in LABEL_SOURCES:
        raise Http404(f"label must be one of {', '.join(LABEL_SOURCES)}")
    return label_source


def _query(campaigns, label_source, **extra):
    return urlencode([("c", c.slug) for c in campaigns] + [("label", label_source)] + list(extra.items()))


def _figure_url(name, fmt, campaigns, label_source, **extra):
    return f"{reverse('campaigns-show-report-figure', args=[name, fmt])}?{_query(campaigns, label_source, **extra)}"


def _render_report(request, campaigns, label_source, page_url):
    cached, status = report_or_status(campaigns, label_source)
    if cached is None:
        return _render_computing(request, campaigns, label_source, page_url, status)
    query = _query(campaigns, label_source)
    context = {
        "campaigns": campaigns,
        "campaign": campaigns[0] if len(campaigns) == 1 else None,
        "label_source": label_source,
        "label_sources": LABEL_SOURCES,
        "page_url": page_url,
        "report": cached.report,
        "signatures": cached.signatures,
        "computed_at": cached.computed_at,
        "poll_seconds": POLL_SECONDS,
        "current_url": f"{page_url}?{query}",
        "switch_urls": [(source, f"{page_url}?{_query(campaigns, source)}") for source in LABEL_SOURCES],
        "tables": [
            {
                "name": name,
                "title": TITLES[name],
                "html": html(cached.report, name),
                "csv_url": f"{reverse('campaigns-download-report-table', args=[name])}?{query}",
            }
            for name in SHOWN
        ],
        "downloads": [
            {
                "name": name,
                "title": TITLES[name],
                "csv_url": f"{reverse('campaigns-download-report-table', args=[name])}?{query}",
            }
            for name in TABLE_NAMES
            if name not in SHOWN
        ],
        "figures": [
            {
                "name": spec.name,
                "title": spec.title,
                # The fingerprint in the URL makes browsers fetch a figure again only when the data changed.
                "png_url": _figure_url(spec.name, "png", campaigns, label_source, v=cached.key[-12:]),
                "download_png_url": _figure_url(spec.name, "png", campaigns, label_source, download=1),
                "download_svg_url": _figure_url(spec.name, "svg", campaigns, label_source, download=1),
            }
            for spec in figure_specs(cached.report)
        ],
    }
    template = "campaigns/_report_body.html" if request.htmx else "campaigns/report.html"
    return render(request, template, context)


def _render_computing(request, campaigns, label_source, page_url, status):
    context = {
        "campaigns": campaigns,
        "label_source": label_source,
        "switch_urls": [(source, f"{page_url}?{_query(campaigns, source)}") for source in LABEL_SOURCES],
        "current_url": f"{page_url}?{_query(campaigns, label_source)}",
        "status": status,
        "elapsed": int((timezone.now() - status["started"]).total_seconds()),
        "poll_seconds": COMPUTING_POLL_SECONDS,
        "computing": True,
    }
    template = "campaigns/_report_computing.html" if request.htmx else "campaigns/report.html"
    return render(request, template, context)


@researcher_required
def show_report(request, slug):
    campaigns = _campaigns_of(request, slug)
    return _render_report(request, campaigns, _label_source(request), reverse("campaigns-show-report", args=[slug]))


@researcher_required
def show_cross_report(request):
    campaigns = _campaigns_of(request)
    return _render_report(request, campaigns, _label_source(request), reverse("campaigns-show-cross-report"))


@researcher_required
def download_report_table(request, name):
    if name not in TABLE_NAMES:
        raise Http404(f"No table {name}")
    campaigns = _campaigns_of(request)
    label_source = _label_source(request)
    cached = get_report(campaigns, label_source)
    filename = f"{'+'.join(c.slug for c in campaigns)}-{label_source}-{name}.csv"
    return csv_response(cached.report.tables[name], filename)


@researcher_required
def show_report_figure(request, name, fmt):
    campaigns = _campaigns_of(request)
    cached = get_report(campaigns, _label_source(request))
    response = HttpResponse(figure_bytes(cached, name, fmt), content_type=FORMATS.get(fmt, "application/octet-stream"))
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response
