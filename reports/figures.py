"""Which figures a report has, and drawing one of them (the drawing itself is `reports.analysis.figures`)."""

from dataclasses import dataclass

from reports.analysis import curves_figure, figure2, systems_figure


@dataclass
class FigureSpec:
    name: str  # in URLs and file names
    title: str
    kind: str  # figure2, thresholds, ranks or systems
    corpus: str


def figure_specs(report) -> list[FigureSpec]:
    """Figure 2 (Global, then each corpus: the paper's Figures 15-20), then the threshold and rank curves
    of Global and of each corpus (numbered, as corpus names vary)."""
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
