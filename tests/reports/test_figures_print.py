"""Figures are legible at print size (type ≥ 8 pt, visible markers); one with nothing to draw is never written."""

import pandas as pd
import pytest

from reports import figures
from reports.analysis import build_report
from reports.analysis.figures import MARKER_AREA, PRINT_WIDTH_INCHES
from reports.figures import draw_figure, draw_figures, figure_specs, skipped_figures
from reports.machinery import workers
from tests.reports.test_analysis_report import data

DIRECTIONS = {"lev": "lower", "bleu": "higher", "parapluie_direct": "higher"}


def report(**changes):
    pairs, judgments = data()
    pairs = pairs.assign(system=["S1", "S2", "S3", "S4"] * 15, **changes)
    return build_report(pairs, judgments, DIRECTIONS, label_source="gold", n_bootstrap=20, n_draws=3)


def smallest_printed_points(figure):
    """The smallest type of the figure at its printed size (scaled down to the print width when wider)."""
    scale = min(1.0, PRINT_WIDTH_INCHES / figure.get_figwidth())
    sizes = [text.get_fontsize() for text in figure.findobj(lambda a: hasattr(a, "get_fontsize")) if text_shown(text)]
    return min(sizes) * scale


def text_shown(artist):
    return artist.get_visible() and bool(getattr(artist, "get_text", lambda: "x")())


@pytest.mark.parametrize("kind", ["figure2", "thresholds", "ranks", "systems"])
def test_every_kind_of_figure_prints_its_type_at_8_points_or_more(kind):
    full = report()
    spec = next(spec for spec in figure_specs(full) if spec.kind == kind)
    figure = draw_figure(full, spec, None)
    assert figure.get_figwidth() <= PRINT_WIDTH_INCHES
    assert smallest_printed_points(figure) >= 8


def test_figure2_markers_are_about_4_points_across():
    full = report()
    figure = draw_figure(full, figure_specs(full)[0], None)
    sizes = {size for axis in figure.axes for collection in axis.collections for size in collection.get_sizes()}
    assert sizes == {MARKER_AREA} and MARKER_AREA**0.5 >= 3.5


def test_a_report_without_labels_writes_no_blank_figure_and_notes_why():
    unlabelled = report(gold_label=pd.array([pd.NA] * 60, dtype="Int64"))
    assert figure_specs(unlabelled) == []
    notes = skipped_figures(unlabelled)
    assert any("no labelled pair with a score" in note and "Rates by threshold — Global" in note for note in notes)
    assert any("no system has a labelled pair" in note for note in notes)


def test_a_corpus_without_labels_loses_only_its_own_figures():
    pairs_labels = [pd.NA] * 30 + [1, 0] * 15
    partial = report(gold_label=pd.array(pairs_labels, dtype="Int64"))
    corpora = {spec.corpus for spec in figure_specs(partial)}
    assert corpora == {"Global", "B"}
    assert any("— A" in note for note in skipped_figures(partial))


def test_draw_figures_gives_each_figure_as_drawn_alone_in_every_format():
    full = report()
    specs = figure_specs(full)
    in_workers = draw_figures(full, specs, ["png", "svg", "pdf"], workers=2)
    assert set(in_workers) == {(spec, fmt) for spec in specs for fmt in ("png", "svg", "pdf")}
    alone = draw_figures(full, specs, ["png"], workers=0)
    for spec in specs:
        # The same pixels whether drawn in a worker process, with other formats, or alone (PNG bytes).
        assert in_workers[(spec, "png")] == alone[(spec, "png")] == draw_figure(full, spec, "png")
        assert in_workers[(spec, "svg")].startswith(b"<?xml") and in_workers[(spec, "pdf")].startswith(b"%PDF")


def test_the_figures_are_drawn_in_worker_processes_where_there_are_cpus_to_spare(monkeypatch):
    monkeypatch.setattr(workers, "usable_cpus", lambda: 2)
    assert figures._workers(9) == 2 and figures._workers(1) == 0
    monkeypatch.setattr(workers, "usable_cpus", lambda: 1)
    assert figures._workers(9) == 0
