"""Which figures a report has, and drawing them (the drawing itself is `reports.analysis.figures`).

A figure with nothing to draw (no labelled pair in a corpus, no system with a paraphrase
rate) is never written: `figure_specs` leaves it out and `skipped_figures` says why in a note.
`draw_figures` draws several at once in worker processes, each sent only its figure's data.
"""

from dataclasses import dataclass
from functools import partial

from reports.analysis import curves_figure, figure2, reliability_figure, systems_figure
from reports.analysis.figures import in_formats
from reports.analysis.labels import GLOBAL
from reports.machinery.workers import run_forked, usable_workers


@dataclass(frozen=True)
class FigureSpec:
    name: str  # in URLs and file names
    title: str
    kind: str  # figure2, thresholds, ranks, systems or calibration
    corpus: str


def _all_specs(report) -> list[FigureSpec]:
    specs = [FigureSpec("figure2", "Figure 2 — scores against the edit distance (all corpora)", "figure2", "Global")]
    for i, corpus in enumerate(report.corpora, start=1):
        specs.append(
            FigureSpec(f"figure2-{i}", f"Figure 2 — scores against the edit distance — {corpus}", "figure2", corpus)
        )
    for i, corpus in enumerate(["Global", *report.corpora]):
        specs.append(FigureSpec(f"thresholds-{i}", f"Rates by threshold — {corpus}", "thresholds", corpus))
        specs.append(FigureSpec(f"ranks-{i}", f"Rates by rank — {corpus}", "ranks", corpus))
    if "reliability" in report.tables:
        specs.append(FigureSpec("calibration", "Reliability diagram — all corpora", "calibration", GLOBAL))
    if len(report.tables["systems"]):
        specs.append(FigureSpec("systems", "Systems ranked by the judges, with 95% CIs", "systems", "Global"))
    return specs


def _missing(report, spec) -> str | None:
    """Why `spec` would be a blank figure, or None when it has something to draw."""
    if spec.kind == "systems":
        systems = report.tables["systems"]  # columnless when its step failed (`analysis.common.failed_table`)
        if "paraphrase_rate" in systems and systems["paraphrase_rate"].notna().any():
            return None
        return "no system has a labelled pair, so no paraphrase rate"
    if not report.metrics:
        return "no metric has scored the pairs"
    if spec.kind == "calibration":
        bins = report.tables["reliability"]
        return None if (bins["corpus"] == spec.corpus).any() else "too few labelled pairs of both classes"
    if spec.kind == "figure2":
        points = report.points
        points = points if spec.corpus == "Global" else points[points["corpus"] == spec.corpus]
        return None if points[report.metrics].notna().any().any() else "no labelled pair with a score"
    curves = report.tables["curves_threshold" if spec.kind == "thresholds" else "curves_rank"]
    return None if "corpus" in curves and (curves["corpus"] == spec.corpus).any() else "no labelled pair with a score"


def figure_specs(report) -> list[FigureSpec]:
    """Figure 2 (Global, then each corpus: the paper's Figures 15-20), then the threshold and rank curves
    of Global and of each corpus (numbered, as corpus names vary): those with something to draw."""
    return [spec for spec in _all_specs(report) if _missing(report, spec) is None]


def skipped_figures(report, kinds=None) -> list[str]:
    """A note per reason that left figures (of `kinds`, default all) out for having nothing to draw, naming them."""
    skipped = {}
    for spec in _all_specs(report):
        if kinds is not None and spec.kind not in kinds:
            continue
        reason = _missing(report, spec)
        if reason is not None:
            skipped.setdefault(reason, []).append(spec.title)
    return [f"Not drawn ({reason}): {'; '.join(titles)}." for reason, titles in skipped.items()]


def drawing(report, spec: FigureSpec):
    """(drawing function, arguments) of `spec`, with only the rows and columns it draws."""
    if spec.kind == "systems":
        return systems_figure, (report.tables["systems"],), {}
    if spec.kind == "calibration":
        bins = report.tables["reliability"]
        return reliability_figure, (bins[bins["corpus"] == spec.corpus], report.metrics), {"corpus": spec.corpus}
    if spec.kind == "figure2":
        points = report.points
        if spec.corpus != GLOBAL:
            points = points[points["corpus"] == spec.corpus]
        points = points[["corpus", "paraphrase", "edit_distance", *report.metrics]]
        sampled_from = report.summary.get("n_points_sampled_from")
        return (
            figure2,
            (points, report.metrics, report.directions),
            {"corpus": spec.corpus, "sampled_from": sampled_from},
        )
    x = "threshold" if spec.kind == "thresholds" else "rank"
    curves = report.tables[f"curves_{x}"]
    return curves_figure, (curves[curves["corpus"] == spec.corpus], report.metrics), {"corpus": spec.corpus, "x": x}


def draw_figure(report, spec: FigureSpec, fmt: str | None) -> bytes:
    """One figure in `fmt` (png, svg or pdf; None: the matplotlib Figure itself)."""
    draw, args, kwargs = drawing(report, spec)
    return draw(*args, fmt=fmt, **kwargs)


def _draw_in_formats(drawing, formats):
    draw, args, kwargs = drawing
    return in_formats(draw, *args, formats=formats, **kwargs)


def _workers(n_figures: int) -> int:
    """Worker processes for `n_figures`: one per CPU this process may use (`usable_workers`), none for one figure."""
    return min(usable_workers(), n_figures) if n_figures > 1 else 0


def draw_figures(report, specs, formats, *, workers=None) -> dict[tuple[FigureSpec, str], bytes]:
    """Every figure of `specs` in every format of `formats`, drawn once per figure, in parallel where it can.

    A figure saved in several formats is laid out once. The figures are drawn by processes forked
    now (`run_forked`: they share this process's memory instead of importing matplotlib again);
    `workers`: how many (0 or 1: draw here), default one per CPU. `draw_figures_later` draws them
    in processes started earlier (the `report` command's).
    """
    drawings = [drawing(report, spec) for spec in specs]
    workers = _workers(len(specs)) if workers is None else workers
    drawn = run_forked([partial(_draw_in_formats, drawing, formats) for drawing in drawings], workers)
    return _by_spec_and_format(specs, drawn)


def draw_figures_later(report, specs, formats, pool):
    """`draw_figures` started now in `pool` (`report_workers`), each worker sent only its figure's data:
    returns the function that waits for them, so that the caller writes its tables meanwhile."""
    drawn = pool.map(_draw_in_formats, [drawing(report, spec) for spec in specs], [formats] * len(specs))
    return lambda: _by_spec_and_format(specs, list(drawn))


def _by_spec_and_format(specs, drawn):
    return {(spec, fmt): data for spec, by_format in zip(specs, drawn) for fmt, data in by_format.items()}
