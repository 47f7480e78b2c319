"""The report as one self-contained HTML file: styles inlined, figures as data URIs, nothing fetched.

A researcher attaches it to an e-mail or a submission's supplementary material; its appendix
holds the metric signatures and the campaigns' protocol settings (the reproducibility statement).
"""

import base64
from dataclasses import asdict

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import timezone

from campaigns.task_types import task_type_of
from metrics.registry import METRICS
from reports.analysis.vocabulary import metric_title, title_for
from reports.figures import draw_figure, figure_specs
from reports.sections import notes_for, sections_of, systems_summary, task_of, with_task_tables
from reports.task_sections import task_section_of

STYLESHEETS = ["css/parasol.css", "css/report.css"]
ANALYSIS_SETTINGS = {
    "seed": "Seed of the balanced draws and the bootstrap",
    "per_label": "MBD: pairs per label and corpus in each draw",
    "n_draws": "MBD: balanced draws",
    "n_bootstrap": "Bootstrap resamples (AUC intervals and tests)",
    "min_shared": "Cohen's κ: pairs two judges must share",
}


def _styles() -> str:
    return "\n".join(open(finders.find(name), encoding="utf-8").read() for name in STYLESHEETS)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _protocol(campaign) -> list[tuple[str, str]]:
    """The settings a reader needs to repeat the judging protocol of `campaign` (its task type says its own)."""
    task_type = task_type_of(campaign)
    return [
        ("Task", str(task_type.title)),
        *task_type.protocol(),
        ("Real pairs per judge", str(campaign.pairs_per_judge)),
        ("Judgments wanted per pair", str(campaign.overlap_target)),
        ("Training pairs", str(campaign.training_pairs.count())),
        ("Control pairs", str(campaign.control_pairs.count())),
        ("Pairs", str(campaign.real_pairs.count())),
    ]


def _signatures(report, signatures) -> list[dict]:
    return [
        {
            "title": metric_title(metric, report.directions.get(metric)),
            "name": metric,
            "direction": report.directions.get(metric, ""),
            "registered": metric in METRICS,
            "signature": signature,
        }
        for metric, signature in sorted(signatures.items())
    ]


def standalone_html(campaigns, report, signatures, *, figure_png=None) -> str:
    """The whole report as one HTML string; `figure_png(spec)` may serve cached figures."""
    figure_png = figure_png or (lambda spec: draw_figure(report, spec, "png"))
    report = with_task_tables(report, campaigns)
    figures = []
    if report.metrics:
        # The figures of the kinds its sections show, as on the page.
        kinds = task_section_of(campaigns).figure_kinds
        specs = [spec for spec in figure_specs(report) if spec.kind in kinds]
        figures = [{"title": spec.title, "png_url": _data_uri(figure_png(spec))} for spec in specs]
    settings = asdict(report.settings)
    context = {
        "campaigns": campaigns,
        "report": report,
        "notes": notes_for(report, task_of(campaigns)),
        "label_source": title_for(report.settings.label_source),
        "styles": _styles(),
        "sections": sections_of(report, task=task_of(campaigns)),
        # The systems figure is among `figures`, at the end of the page.
        "systems": systems_summary(report),
        "figures": figures,
        "signatures": _signatures(report, signatures),
        "protocols": [(campaign, _protocol(campaign)) for campaign in campaigns],
        "analysis_settings": [(text, settings[key]) for key, text in ANALYSIS_SETTINGS.items()],
        "written_at": timezone.now(),
    }
    return render_to_string("reports/standalone.html", context)
