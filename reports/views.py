"""Report pages of one or more campaigns, their table and figure downloads, and the CSV exports.

The statistics are `reports.analysis` (plain pandas), read from the database by
`reports.frames` and cached by `reports.cache`; these views check access and serve them.
"""

from functools import wraps
from urllib.parse import urlencode

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from campaigns.access import campaign_for, csv_response, csv_stream_response, researcher_required
from campaigns.models import Campaign
from campaigns.scores import signature_lines
from parasol.queues import QUEUED, REPORTS, waiting_on
from reports.analysis import LABEL_SOURCES
from reports.analysis.figures import FORMATS
from reports.analysis.present import csv_comments, latex
from reports.analysis.vocabulary import metric_title, title_for
from reports.cache import figure_bytes
from reports.exports import JUDGMENT_COLUMNS, jsonl_response, judgments_frames, pairs_with_scores_pages, tagging_lines
from reports.figures import figure_specs
from reports.frames import label_sources_with_labels, metric_signatures
from reports.sections import (
    TABLE_HEADINGS,
    download_only,
    has_content,
    notes_for,
    sections_of,
    systems_summary,
    task_of,
    with_task_tables,
)
from reports.standalone import standalone_html
from reports.task_sections import task_section_of
from reports.tasks import report_or_status

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


def _label_source(request, campaigns):
    """The `label` asked for; without one, the judges' labels if there are any, else gold labels if imported."""
    if "label" not in request.GET:
        available = label_sources_with_labels(campaigns)
        return next((source for source in LABEL_SOURCES if available[source]), LABEL_SOURCES[0])
    label_source = request.GET.get("label")
    if label_source not in LABEL_SOURCES:
        raise Http404(f"label must be one of {', '.join(LABEL_SOURCES)}")
    return label_source


def _query(campaigns, label_source, **extra):
    return urlencode([("c", c.slug) for c in campaigns] + [("label", label_source)] + list(extra.items()))


def _figure_url(name, fmt, campaigns, label_source, **extra):
    return f"{reverse('reports-show-report-figure', args=[name, fmt])}?{_query(campaigns, label_source, **extra)}"


def _table_links(campaigns, query):
    """A table's downloads, the same three for every table, the task types' included: CSV, CSV with notes, LaTeX."""

    def links(name):
        return {
            "csv_url": f"{reverse('reports-download-report-table', args=[name])}?{query}",
            "tex_url": f"{reverse('reports-download-report-latex', args=[name])}?{query}",
            "annotated_csv_url": f"{reverse('reports-download-report-table', args=[name])}?{query}&comments=1",
        }

    return links


def _figures(cached, campaigns, label_source):
    return [
        {
            "name": spec.name,
            "title": spec.title,
            # The fingerprint in the URL makes browsers fetch a figure again only when the data changed.
            "png_url": _figure_url(spec.name, "png", campaigns, label_source, v=cached.key[-12:]),
            "download_png_url": _figure_url(spec.name, "png", campaigns, label_source, download=1),
            "download_svg_url": _figure_url(spec.name, "svg", campaigns, label_source, download=1),
            "download_pdf_url": _figure_url(spec.name, "pdf", campaigns, label_source, download=1),
        }
        for spec in figure_specs(cached.report)
    ]


def _switch_urls(campaigns, page_url):
    """(source, its name, URL, whether it has labels) for the label-source buttons."""
    available = label_sources_with_labels(campaigns)
    return [
        (source, title_for(source), f"{page_url}?{_query(campaigns, source)}", available[source])
        for source in LABEL_SOURCES
    ]


def _scored(cached):
    """Each metric the report asked for: its printed name, pairs scored and the signature used."""
    report = cached.report
    return [
        {"title": metric_title(m, report.directions.get(m)), "n": n, "signature": cached.signatures.get(m, "")}
        for m, n in report.summary["n_scored"].items()
    ]


def _render_report(request, campaigns, label_source, page_url):
    cached, status = report_or_status(campaigns, label_source)
    if cached is None:
        return _render_computing(request, campaigns, label_source, page_url, status)
    query = _query(campaigns, label_source)
    links = _table_links(campaigns, query)
    task = task_of(campaigns)
    report = with_task_tables(cached.report, campaigns)
    figures = _figures(cached, campaigns, label_source)
    notes = notes_for(report, task)
    context = {
        "campaigns": campaigns,
        "campaign": campaigns[0] if len(campaigns) == 1 else None,
        "label_source": label_source,
        "label_source_name": title_for(label_source),
        "label_sources": LABEL_SOURCES,
        "page_url": page_url,
        "report": cached.report,
        "notes": notes,
        "signatures": cached.signatures,
        "scored": _scored(cached),
        "computed_at": cached.computed_at,
        "poll_seconds": POLL_SECONDS,
        "current_url": f"{page_url}?{query}",
        "switch_urls": _switch_urls(campaigns, page_url),
        "html_url": f"{reverse('reports-download-report-html')}?{query}",
        "sections": sections_of(report, links, task=task),
        "downloads": [{"name": n, "title": TABLE_HEADINGS[n], **links(n)} for n in download_only()],
        "figures": [figure for figure in figures if figure["name"] != "systems"],
        "systems": {
            **systems_summary(report),
            "figure": next((figure for figure in figures if figure["name"] == "systems"), None),
        },
    }
    template = "reports/_body.html" if request.htmx else "reports/report.html"
    return render(request, template, context)


def _render_computing(request, campaigns, label_source, page_url, status):
    """The page (or, polled, its body) while a worker computes the report: the stage it reached."""
    context = {
        "campaigns": campaigns,
        "label_source": label_source,
        "switch_urls": _switch_urls(campaigns, page_url),
        "current_url": f"{page_url}?{_query(campaigns, label_source)}",
        "status": status,
        "waiting": waiting_on(REPORTS) if status["stage"] == QUEUED else None,
        "elapsed": int((timezone.now() - status["started"]).total_seconds()),
        "poll_seconds": COMPUTING_POLL_SECONDS,
        "computing": True,
    }
    template = "reports/_computing.html" if request.htmx else "reports/report.html"
    return render(request, template, context)


@researcher_required
def show_report(request, slug):
    campaigns = _campaigns_of(request, slug)
    return _render_report(
        request, campaigns, _label_source(request, campaigns), reverse("reports-show-report", args=[slug])
    )


@researcher_required
def show_cross_report(request):
    campaigns = _campaigns_of(request)
    return _render_report(request, campaigns, _label_source(request, campaigns), reverse("reports-show-cross-report"))


class ReportNotReady(Exception):
    """A download asked for a report a worker is still computing (answered 202 with its stage)."""

    def __init__(self, status):
        self.status = status


def _ready_report(campaigns, label_source):
    """The report, as the page gets it: computed here only when small, else by a worker (ReportNotReady meanwhile)."""
    cached, status = report_or_status(campaigns, label_source)
    if cached is None:
        raise ReportNotReady(status)
    return cached


def _not_ready(status):
    if status.get("error"):
        text = f"The worker computing the report gave up: {status['error']}. Ask again in a minute.\n"
    else:
        text = (
            f"The report is being computed by a worker (stage: {status['stage']}). "
            "Download it again once the report page shows it.\n"
        )
    response = HttpResponse(text, status=202, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(COMPUTING_POLL_SECONDS)
    return response


def waits_for_the_report(view):
    """A download view answering 202 with the stage while the worker computes the report it needs."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except ReportNotReady as not_ready:
            return _not_ready(not_ready.status)

    return wrapper


def _table_download(request, name):
    """(campaigns, report, file stem) of a table download; 404 for a table no report of these campaigns has."""
    if name not in TABLE_HEADINGS:
        raise Http404(f"No table {name}")
    campaigns = _campaigns_of(request)
    label_source = _label_source(request, campaigns)
    stem = f"{'+'.join(c.slug for c in campaigns)}-{label_source}-{name}"
    # The task type's tables and declarations: its own tables (PEM's criteria, the span tagging), and its
    # version of a report table (criteria's system_correlation), as its page shows them.
    report = with_task_tables(_ready_report(campaigns, label_source).report, campaigns)
    if name not in report.tables:
        raise Http404(f"No table {name} for campaigns of this task type")
    return campaigns, report, stem


@researcher_required
@waits_for_the_report
def download_report_table(request, name):
    _campaigns, report, stem = _table_download(request, name)
    comments = csv_comments(report, name) if request.GET.get("comments") == "1" else ()
    return csv_response(report.tables[name], f"{stem}.csv", comments)


@researcher_required
@waits_for_the_report
def download_report_table_latex(request, name):
    campaigns, report, stem = _table_download(request, name)
    if not has_content(report, task_of(campaigns), name):
        raise Http404(f"Table {name} has nothing to show yet.")
    response = HttpResponse(latex(report, name), content_type="application/x-tex; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stem}.tex"'
    return response


@researcher_required
@waits_for_the_report
def download_report_html(request):
    campaigns = _campaigns_of(request)
    label_source = _label_source(request, campaigns)
    cached = _ready_report(campaigns, label_source)
    page = standalone_html(
        campaigns, cached.report, cached.signatures, figure_png=lambda spec: figure_bytes(cached, spec, "png")
    )
    response = HttpResponse(page, content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="{"+".join(c.slug for c in campaigns)}-{label_source}-report.html"'
    )
    return response


@researcher_required
@waits_for_the_report
def show_report_figure(request, name, fmt):
    campaigns = _campaigns_of(request)
    cached = _ready_report(campaigns, _label_source(request, campaigns))
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
def download_task_table(request, slug, name):
    campaign = campaign_for(request, slug)
    # A table the campaign's task type declares and reads itself (the span tagging's, PEM's criteria).
    section = task_section_of([campaign])
    if name not in section.headings or section.tables is None:
        raise Http404(f"No table {name} of this campaign's task type")
    return csv_response(section.tables([campaign])[name], f"{campaign.slug}-{name}.csv")
