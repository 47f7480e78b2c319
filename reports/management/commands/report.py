"""Write a campaign report to a folder: tables as CSV (and LaTeX), figures as PNG (and SVG, PDF), one HTML file."""

import re
from pathlib import Path

import pandas as pd
from django.core.management.base import BaseCommand, CommandError

from campaigns.exports import write_csv
from campaigns.models import Campaign
from metrics.registry import METRICS
from reports.analysis import LABEL_SOURCES, TABLE_NAMES, meta
from reports.analysis.latex import latex_document
from reports.analysis.present import csv_comments, latex
from reports.cache import compute_report, n_real_pairs
from reports.figures import draw_figures, draw_figures_later, figure_specs, skipped_figures
from reports.machinery.workers import report_workers
from reports.sections import analysis_notes, tables_with_content, task_of, with_task_tables
from reports.standalone import standalone_html


def _file_stem(spec):
    """figure2, figure2_mrpc, systems, thresholds_global, ranks_mrpc...: corpus names made safe for file names."""
    if spec.kind == "systems" or (spec.kind == "figure2" and spec.corpus == "Global"):
        return spec.kind
    return f"{spec.kind}_{re.sub(r'[^A-Za-z0-9_.-]+', '-', spec.corpus).strip('-').lower() or 'corpus'}"


def _write_latex(report, task, out):
    """Each table with something to show as `<name>.tex`; `tables.tex` (an article of them all) checks they compile."""
    tables = {name: latex(report, name) for name in tables_with_content(report, task)}
    tables = {name: table for name, table in tables.items() if table is not None}
    for name, table in tables.items():
        (out / f"{name}.tex").write_text(table, encoding="utf-8")
    (out / "tables.tex").write_text(latex_document(list(tables.values())), encoding="utf-8")


class Command(BaseCommand):
    help = "Compute the metric-vs-human report of one or more campaigns and write its tables and figures to --out."

    def add_arguments(self, parser):
        parser.add_argument("campaigns", nargs="+", metavar="CAMPAIGN", help="campaign slug(s)")
        parser.add_argument(
            "--label-source",
            choices=LABEL_SOURCES,
            default="human",
            help="human: the judges' majority (default); gold: the corpus's labels; dawid_skene or mace: the "
            "judges' votes aggregated by a model of each judge's competence (crowd-kit)",
        )
        parser.add_argument(
            "--significance",
            choices=meta.METHODS,
            default="bootstrap",
            help="how two metrics' difference is tested: paired bootstrap of the difference (default) or "
            "permutation (Deutsch et al. 2021's perm-both)",
        )
        parser.add_argument(
            "--resample",
            choices=meta.UNITS,
            default="pairs",
            help="what the tests of metric differences resample: pairs (default) or sources (all their candidates)",
        )
        parser.add_argument(
            "--correction",
            choices=meta.CORRECTIONS,
            default="holm",
            help="the correction of the p-values for the many metric comparisons (default: Holm's)",
        )
        parser.add_argument("--out", required=True, help="folder to write into (created if missing)")
        parser.add_argument("--seed", type=int, default=2024, help="seed of the MBD draws and the bootstrap")
        parser.add_argument("--no-figures", action="store_true", help="write the tables only")
        parser.add_argument(
            "--latex",
            action="store_true",
            help="also write each table as a booktabs .tex and the figures as PDF and SVG",
        )
        parser.add_argument("--html", action="store_true", help="also write report.html: one self-contained file")
        parser.add_argument(
            "--csv-comments",
            action="store_true",
            help="open each table's CSV with '# ' lines: its title and each column in words (pandas: comment='#')",
        )
        parser.add_argument(
            "--ppi-predictor",
            metavar="METRIC",
            help="the metric whose scores predict the labels in the estimates table "
            "(default: the best on the judged pairs, chosen by cross-fitting)",
        )
        parser.add_argument(
            "--full-curves",
            action="store_true",
            help="one curve row per pair (default: 1,000 evenly spaced points per metric and corpus)",
        )

    def handle(self, *args, **options):
        # Forked first, before any query: they may then read the scores (`reports.machinery.workers`).
        with report_workers() as workers:
            self._report(options, workers)

    def _report(self, options, workers):
        slugs = list(dict.fromkeys(options["campaigns"]))
        campaigns = {c.slug: c for c in Campaign.objects.filter(slug__in=slugs)}
        missing = [slug for slug in slugs if slug not in campaigns]
        if missing:
            raise CommandError(f"no campaign with slug {', '.join(missing)}")
        out = Path(options["out"])
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CommandError(f"cannot create {out}: {error}") from None
        chosen = [campaigns[slug] for slug in slugs]
        if options["ppi_predictor"] and options["ppi_predictor"] not in METRICS:
            raise CommandError(f"--ppi-predictor: no metric {options['ppi_predictor']!r}; one of {', '.join(METRICS)}")
        if not n_real_pairs(chosen):
            raise CommandError(f"{', '.join(slugs)}: no pairs to report on")
        self._write(chosen, campaigns, slugs, out, options, workers)

    def _write(self, chosen, campaigns, slugs, out, options, workers):
        report, frames = compute_report(
            chosen,
            options["label_source"],
            seed=options["seed"],
            **({"curve_points": None} if options["full_curves"] else {}),
            **({"ppi_predictor": options["ppi_predictor"]} if options["ppi_predictor"] else {}),
            significance_method=options["significance"],
            significance_unit=options["resample"],
            significance_correction=options["correction"],
            workers=workers,
        )
        formats = ["png", "svg", "pdf"] if options["latex"] else ["png"]
        drawing = not options["no_figures"] and report.metrics
        figures = self._start_figures(report, formats, workers) if drawing else dict  # drawn while tables are written

        def write_table(name):
            comments = csv_comments(report, name) if options["csv_comments"] else ()
            write_csv(report.tables[name], out / f"{name}.csv", comments=comments)

        for name in TABLE_NAMES:
            write_table(name)
        signatures = pd.DataFrame(
            [(m, frames.directions[m], s) for m, s in frames.signatures.items()],
            columns=["metric", "direction", "signature"],
        )
        write_csv(signatures, out / "signatures.csv")
        # PEM's criteria tables, or span_agreement.csv, span_degree.csv and the rest of the span tagging report.
        task, report = task_of(chosen), with_task_tables(report, chosen)
        for name in sorted(report.tables.keys() - set(TABLE_NAMES)):
            write_table(name)
        # The notes of the steps this task type's report shows; the figures drawn with nothing to draw say why.
        notes = analysis_notes(report, task)
        report.notes = notes + (skipped_figures(report) if not options["no_figures"] else [])
        (out / "notes.txt").write_text("".join(f"{note}\n" for note in report.notes), encoding="utf-8")
        if options["latex"]:
            _write_latex(report, task, out)
        for (spec, fmt), data in figures().items():
            (out / f"{_file_stem(spec)}.{fmt}").write_bytes(data)
        if options["html"]:
            page = standalone_html([campaigns[slug] for slug in slugs], report, frames.signatures)
            (out / "report.html").write_text(page, encoding="utf-8")
        for note in report.notes:
            self.stderr.write(f"note: {note}")
        self.stdout.write(
            f"Report of {', '.join(slugs)} ({options['label_source']} labels): {report.summary['n_labelled']} of "
            f"{report.summary['n_pairs']} pairs labelled, {len(report.metrics)} metric(s); written to {out}"
        )

    @staticmethod
    def _start_figures(report, formats, workers):
        """The function returning the figures: started in `workers` when there are some, else drawn when called."""
        specs = figure_specs(report)
        if workers is not None:
            return draw_figures_later(report, specs, formats, workers.pool)
        return lambda: draw_figures(report, specs, formats)
