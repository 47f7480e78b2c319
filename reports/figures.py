"""Which figures a report has, and drawing one of them (the drawing itself is `reports.analysis.figures`).

A figure with nothing to draw (no labelled pair in a corpus, no system with a paraphrase
rate) is never written: `figure_specs` leaves it out and `skipped_figures` says why in a note.
"""

from dataclasses import dataclass

from reports.analysis import curves_figure, figure2, systems_figure


@dataclass
class FigureSpec:
    name: str  # in URLs and file names
    title: str
    kind: str  # figure2, thresholds, ranks or systems
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
    if len(report.tables["systems"]):
        specs.append(FigureSpec("systems", "Systems ranked by the judges, with 95% CIs", "systems", "Global"))
    return specs


def _missing(report, spec) -> str | None:
    """Why `spec` would be a blank figure, or None when it has something to draw."""
    if spec.kind == "systems":
        if report.tables["systems"]["paraphrase_rate"].notna().any():
            return None
        return "no system has a labelled pair, so no paraphrase rate"
    if not report.metrics:
        return "no metric has scored the pairs"
    if spec.kind == "figure2":
        points = report.points
        points = points if spec.corpus == "Global" else points[points["corpus"] == spec.corpus]
        return None if points[report.metrics].notna().any().any() else "no labelled pair with a score"
    curves = report.tables["curves_threshold" if spec.kind == "thresholds" else "curves_rank"]
    return None if (curves["corpus"] == spec.corpus).any() else "no labelled pair with a score"


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


def draw_figure(report, spec: FigureSpec, fmt: str) -> bytes:
    if spec.kind == "systems":
        return systems_figure(report.tables["systems"], fmt=fmt)
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
