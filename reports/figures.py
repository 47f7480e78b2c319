"""Which figures a report has, and drawing them (the drawing itself is `reports.analysis.figures`).

A figure with nothing to draw (no labelled pair in a corpus, no system with a paraphrase
rate) is never written: `figure_specs` leaves it out and `skipped_figures` says why in a note.
`draw_figures` draws several at once in worker processes, each sent only its figure's data.
"""

import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from reports.analysis import curves_figure, figure2, systems_figure
from reports.analysis.figures import in_formats, warm_up
from reports.analysis.labels import GLOBAL


@dataclass(frozen=True)
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


def _drawing(report, spec: FigureSpec):
    """(drawing function, arguments) of `spec`, with only the rows and columns it draws."""
    if spec.kind == "systems":
        return systems_figure, (report.tables["systems"],), {}
    if spec.kind == "figure2":
        points = report.points
        if spec.corpus != GLOBAL:
            points = points[points["corpus"] == spec.corpus]
        points = points[["corpus", "label", "edit_distance", *report.metrics]]
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
    draw, args, kwargs = _drawing(report, spec)
    return draw(*args, fmt=fmt, **kwargs)


def _draw_in_formats(drawing, formats):
    draw, args, kwargs = drawing
    return in_formats(draw, *args, formats=formats, **kwargs)


def _workers(n_figures: int) -> int:
    """Worker processes for `n_figures`: one per CPU this process may use, none inside a daemon.

    A Celery prefork worker is a daemon, and a daemon may not start processes: it draws alone.
    """
    if multiprocessing.current_process().daemon or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    cpus = _cpus()
    return min(cpus, n_figures) if cpus > 1 and n_figures > 1 else 0


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def figure_workers(workers=None):
    """Processes that will draw a report's figures, started now, before the report is computed.

    Forked while this process is still small (before it reads any pair), each imports matplotlib
    and lays out a first figure on the CPU the computation leaves idle, so that the figures later
    cost only their drawing. Yields None where no process may be started (a daemon, one CPU).
    `workers`: processes (0: none), default one per CPU.
    """
    workers = _workers(_cpus()) if workers is None else workers
    if not workers:
        yield None
        return
    # The children never query the database (they exit without closing what they inherited).
    # With fork, the pool starts all its processes at the first job; each runs `warm_up` first.
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=warm_up)
    pool.submit(int)
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


def draw_figures(report, specs, formats, *, workers=None, pool=None) -> dict[tuple[FigureSpec, str], bytes]:
    """Every figure of `specs` in every format of `formats`, drawn once per figure, in parallel where it can.

    Each worker is sent only the data of the figure it draws, and a figure saved in several formats
    is laid out once. `pool`: the processes of `figure_workers`; without one, processes forked now
    (sharing this process's memory instead of importing matplotlib again); `workers`: how many
    (0: draw here), default one per CPU.
    """
    drawings = [_drawing(report, spec) for spec in specs]
    if pool is not None:
        drawn = list(pool.map(_draw_in_formats, drawings, [formats] * len(specs)))
        return _by_spec_and_format(specs, drawn)
    workers = _workers(len(specs)) if workers is None else workers
    if workers:
        # Frozen objects are skipped by the workers' garbage collector, which would otherwise
        # touch, and so copy, every page of the parent's objects.
        gc.freeze()
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as forked:
                drawn = list(forked.map(_draw_in_formats, drawings, [formats] * len(specs)))
        finally:
            gc.unfreeze()
    else:
        drawn = [_draw_in_formats(drawing, formats) for drawing in drawings]
    return _by_spec_and_format(specs, drawn)


def _by_spec_and_format(specs, drawn):
    return {(spec, fmt): data for spec, by_format in zip(specs, drawn) for fmt, data in by_format.items()}
