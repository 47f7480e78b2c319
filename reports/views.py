"""Report pages of one or more campaigns, their table and figure downloads, and the CSV exports.

The statistics are `reports.analysis` (plain pandas), read from the database by
`reports.frames` and cached by `reports.cache`; these views check access and serve them.
"""

from urllib.parse import urlencode

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from annotation.tasktypes.registry import task_type_of
from campaigns.access import campaign_for, csv_response, csv_stream_response, researcher_required
from campaigns.models import Campaign
from reports.analysis import LABEL_SOURCES, TABLE_NAMES
from reports.analysis.figures import FORMATS
from reports.analysis.present import SHOWN, SYSTEM_TABLES, TITLES, html
from reports.analysis.systems import MIN_SYSTEMS_FOR_CORRELATION
from reports.cache import figure_bytes, get_report
from reports.criteria_section import criteria_tables, html_tables
from reports.exports import JUDGMENT_COLUMNS, jsonl_response, judgments_frames, pairs_with_scores_pages, tagging_lines
from reports.figures import figure_specs
from reports.frames import metric_signatures
from reports.spans import SPAN_TABLE_TITLES, is_span_campaign, span_tables, span_tables_for_page
from reports.tasks import report_or_status
from scoring.service import signature_lines

POLL_SECONDS = 20
COMPUTING_POLL_SECONDS = 2


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


def _tables(cached, query):
    """The tables shown on the page (with their HTML), then those offered as CSV only."""

    def entry(name):
        return {
            "name": name,
            "title": TITLES[name],
            "csv_url": f"{reverse('campaigns-download-report-table', args=[name])}?{query}",
        }

    shown = [{**entry(name), "html": html(cached.report, name)} for name in SHOWN]
    systems = [{**entry(name), "html": html(cached.report, name)} for name in SYSTEM_TABLES]
    return shown, [entry(name) for name in TABLE_NAMES if name not in SHOWN + SYSTEM_TABLES], systems


def _figures(cached, campaigns, label_source):
    return [
        {
            "name": spec.name,
            "title": spec.title,
            # The fingerprint in the URL makes browsers fetch a figure again only when the data changed.
            "png_url": _figure_url(spec.name, "png", campaigns, label_source, v=cached.key[-12:]),
            "download_png_url": _figure_url(spec.name, "png", campaigns, label_source, download=1),
            "download_svg_url": _figure_url(spec.name, "svg", campaigns, label_source, download=1),
        }
        for spec in figure_specs(cached.report)
    ]


def _render_report(request, campaigns, label_source, page_url):
    cached, status = report_or_status(campaigns, label_source)
    if cached is None:
        return _render_computing(request, campaigns, label_source, page_url, status)
    query = _query(campaigns, label_source)
    tables, downloads, system_tables = _tables(cached, query)
    figures = _figures(cached, campaigns, label_source)
    n_systems = len(cached.report.tables["systems"])
    context = {
        "campaigns": campaigns,
        "campaign": campaigns[0] if len(campaigns) == 1 else None,
        "label_source": label_source,
        "label_sources": LABEL_SOURCES,
        # Campaigns compared in one report share a task type (today all are `similarity`).
        "report_section": task_type_of(campaigns[0]).report_section,
        "page_url": page_url,
        "report": cached.report,
        "signatures": cached.signatures,
        "computed_at": cached.computed_at,
        "poll_seconds": POLL_SECONDS,
        "current_url": f"{page_url}?{query}",
        "switch_urls": [(source, f"{page_url}?{_query(campaigns, source)}") for source in LABEL_SOURCES],
        "tables": tables,
        "downloads": downloads,
        "figures": [figure for figure in figures if figure["name"] != "systems"],
        "systems": {
            "n": n_systems,
            "meaningful": n_systems >= MIN_SYSTEMS_FOR_CORRELATION,
            "minimum": MIN_SYSTEMS_FOR_CORRELATION,
            "tables": system_tables,
            "figure": next((figure for figure in figures if figure["name"] == "systems"), None),
        },
        "span_tables": span_tables_for_page(campaigns) if is_span_campaign(campaigns[0]) else [],
    }
    if context["report_section"].name == "criteria":
        context["criteria_tables"] = html_tables(criteria_tables(campaigns))
    template = "reports/_body.html" if request.htmx else "reports/report.html"
    return render(request, template, context)


def _render_computing(request, campaigns, label_source, page_url, status):
    """The page (or, polled, its body) while a worker computes the report: the stage it reached."""
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
    template = "reports/_computing.html" if request.htmx else "reports/report.html"
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
    spec = next((spec for spec in figure_specs(cached.report) if spec.name == name), None)
    if fmt not in FORMATS or spec is None:
        raise Http404(f"No figure {name}.{fmt}")
    response = HttpResponse(figure_bytes(cached, spec, fmt), content_type=FORMATS[fmt])
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


# Exports: the pairs with judgment counts and metric scores, the judgments, the scores' signatures.
# The CSV files are streamed a page of rows at a time: memory stays flat however large the campaign.


@researcher_required
def export_pairs(request, slug):
    campaign = campaign_for(request, slug)
    frames, columns, _signatures = pairs_with_scores_pages(campaign)
    return csv_stream_response(frames, columns, f"{campaign.slug}-pairs.csv")


@researcher_required
def export_signatures(request, slug):
    campaign = campaign_for(request, slug)
    signatures, _notes = metric_signatures([campaign])
    response = HttpResponse(signature_lines(signatures), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-signatures.txt"'
    return response


@researcher_required
def export_judgments(request, slug):
    campaign = campaign_for(request, slug)
    return csv_stream_response(judgments_frames(campaign), JUDGMENT_COLUMNS, f"{campaign.slug}-judgments.csv")


@researcher_required
def export_taggings(request, slug):
    campaign = campaign_for(request, slug)
    return jsonl_response(tagging_lines(campaign), f"{campaign.slug}-taggings.jsonl")


@researcher_required
def download_span_table(request, slug, name):
    campaign = campaign_for(request, slug)
    if name not in SPAN_TABLE_TITLES or not is_span_campaign(campaign):
        raise Http404(f"No span table {name}")
    return csv_response(span_tables([campaign])[name], f"{campaign.slug}-{name}.csv")
