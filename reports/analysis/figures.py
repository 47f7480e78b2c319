"""Figures as PNG, SVG or PDF bytes (matplotlib's Agg canvas, no pyplot global state).

- `figure2`: each metric's score against the edit distance, paraphrases as blue circles,
  non-paraphrases as orange squares, a metric's natural threshold (the registry's: ParaPLUIE's 0) as a red line.
- `curves_figure`: accuracy, F1, recall and precision as functions of the threshold
  (paper, Figures 3-8) or of the rank (Figures 9-14) for one corpus or Global.
"""

import functools
import io
import math

import numpy as np

from metrics.registry import natural_threshold_of
from reports.analysis.common import evenly_spaced
from reports.analysis.labels import GLOBAL
from reports.analysis.vocabulary import metric_title, title_for

MAX_CURVE_POINTS = 1500
FORMATS = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf"}
# Figures are drawn at the size they are printed (a column of A4 text, 7 in at most) so that
# their type is the size it says: 8 pt at least, titles 9 pt. PNGs at 150 dpi stay sharp on screen.
PRINT_WIDTH_INCHES = 7.0
PNG_DPI = 150
STYLE = {
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 9,
    # A fixed title height: matplotlib otherwise measures every tick label of every panel to place each title
    # (a fifth of a 17-panel figure's drawing); no panel has ticks above it, so the figures are byte-identical.
    "axes.titley": 1.0,
}
MARKER_AREA = 14  # points²: a marker about 4 pt across at print size
RATE_STYLES = {"accuracy": "tab:orange", "f1": "tab:blue", "recall": "black", "precision": "tab:purple"}


def _matplotlib():
    """matplotlib on its Agg canvas, imported on the first drawing: a report's tables need none of its second."""
    import matplotlib

    matplotlib.use("Agg")
    return matplotlib


def _figure(**options):
    from matplotlib.figure import Figure

    _matplotlib()
    return Figure(**options)


def _grid(n_panels, width=2.3, height=2.0, columns=3):
    columns = min(columns, max(n_panels, 1))
    rows = max(1, math.ceil(n_panels / columns))
    # Fixed margins: constrained layout measured every tick label again and took half the drawing time.
    figure = _figure(figsize=(width * columns, height * rows))
    inches = height * rows
    top = 1 - 0.55 / inches
    figure.subplots_adjust(left=0.08, right=0.98, bottom=0.45 / inches, top=top, wspace=0.38, hspace=0.7)
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for extra in axes[n_panels:]:
        extra.set_visible(False)
    return figure, axes


def _bytes(figure, fmt):
    """The figure in `fmt`; with fmt None, the Figure itself (to measure it)."""
    if fmt is None:
        return figure
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {sorted(FORMATS)}, got {fmt!r}")
    buffer = io.BytesIO()
    figure.savefig(buffer, format=fmt, dpi=PNG_DPI)
    return buffer.getvalue()


def styled(draw):
    """Draw with the print-size type of STYLE (matplotlib's rc settings, for this figure only)."""

    @functools.wraps(draw)  # its qualified name too, so that worker processes can be sent it (pickle)
    def drawing(*args, **kwargs):
        with _matplotlib().rc_context(STYLE):
            return draw(*args, **kwargs)

    return drawing


def in_formats(draw, *args, formats, **kwargs) -> dict[str, bytes]:
    """{fmt: bytes} of the figure `draw(*args, **kwargs)`, laid out once and saved in each of `formats`."""
    with _matplotlib().rc_context(STYLE):
        figure = draw(*args, fmt=None, **kwargs)
        return {fmt: _bytes(figure, fmt) for fmt in formats}


@styled
def figure2(points, metrics, directions, *, corpus=GLOBAL, fmt="png", sampled_from=None) -> bytes:
    """Score vs edit distance per metric for the labelled pairs of `corpus` (Global: all).

    `sampled_from`: how many labelled pairs `points` were drawn from, when they are a sample (said in the title).
    """
    labelled = points[points["paraphrase"].notna()]
    if corpus != GLOBAL:
        labelled = labelled[labelled["corpus"] == corpus]
    figure, axes = _grid(len(metrics))
    for axis, metric in zip(axes, metrics):
        for value, colour, marker, name in (
            (1, "tab:blue", "o", title_for("paraphrase")),
            (0, "tab:orange", "s", title_for("non_paraphrase")),
        ):
            part = labelled[(labelled["paraphrase"] == value) & labelled[metric].notna()]
            axis.scatter(
                part["edit_distance"],
                part[metric],
                s=MARKER_AREA,
                c=colour,
                marker=marker,
                alpha=0.5,
                label=name,
                linewidths=0,
                rasterized=True,
            )
        natural = natural_threshold_of(metric)
        if natural is not None:
            axis.axhline(natural, color="red", linewidth=1)
        axis.set_title(metric_title(metric, directions[metric]))
        axis.set_xlabel("edit distance")
        axis.set_ylabel("score")
    if metrics:
        axes[0].legend(loc="best")
    title = f"Scores against edit distance — {corpus}"
    if sampled_from:
        title += f"\n(a random sample of {len(labelled):,} of {sampled_from:,} labelled pairs)"
    figure.suptitle(title)
    return _bytes(figure, fmt)


@styled
def curves_figure(curves, metrics, *, corpus=GLOBAL, x="threshold", fmt="png") -> bytes:
    """Accuracy, F1, recall and precision against `x` ("threshold" or "rank") per metric for one corpus."""
    if x not in ("threshold", "rank"):
        raise ValueError(f"x must be 'threshold' or 'rank', got {x!r}")
    part = curves[curves["corpus"] == corpus]
    shown = [m for m in metrics if (part["metric"] == m).any()]
    figure, axes = _grid(len(shown))
    for axis, metric in zip(axes, shown):
        # More points than pixels: draw an even subsample, ends kept.
        rows = evenly_spaced(part[part["metric"] == metric], MAX_CURVE_POINTS)
        for rate, colour in RATE_STYLES.items():
            axis.plot(rows[x], rows[rate], color=colour, linewidth=1, label=title_for(rate))
        axis.set_title(metric_title(metric))
        axis.set_xlabel("score threshold" if x == "threshold" else "rank")
        axis.set_ylim(-0.02, 1.02)
    if shown:
        axes[0].legend(loc="best")
    figure.suptitle(f"Classification quality by {x} — {corpus}")
    return _bytes(figure, fmt)


@styled
def systems_figure(systems, *, fmt="png") -> bytes:
    """Systems ranked by the human paraphrase rate, with their bootstrap 95% CIs over sources."""
    ranked = systems.dropna(subset=["paraphrase_rate"]).sort_values("paraphrase_rate")
    figure = _figure(figsize=(PRINT_WIDTH_INCHES * 0.7, 0.9 + 0.3 * max(len(ranked), 1)), layout="constrained")
    axis = figure.subplots()
    rates = ranked["paraphrase_rate"].to_numpy(float)
    errors = np.vstack([rates - ranked["ci_low"].to_numpy(float), ranked["ci_high"].to_numpy(float) - rates])
    axis.errorbar(rates, np.arange(len(ranked)), xerr=np.nan_to_num(errors), fmt="o", color="tab:blue", capsize=3)
    axis.set_yticks(np.arange(len(ranked)), ranked["system"].astype(str).tolist())
    axis.set_xlim(-0.02, 1.02)
    axis.set_xlabel("paraphrase rate (95% CI, sources resampled)")
    figure.suptitle("Systems ranked by the judges")
    return _bytes(figure, fmt)


PROBABILITY_STYLES = {"sigmoid": ("tab:red", "s", "sigmoid(score)"), "calibrated": ("tab:blue", "o", "calibrated")}


@styled
def reliability_figure(bins, metrics, *, corpus=GLOBAL, fmt="png") -> bytes:
    """Reliability diagram per metric: each bin's mean predicted probability against the observed paraphrase share
    (marker area by the bin's pairs), a log-odds metric read as it stands beside its calibrated version."""
    shown = [m for m in metrics if (bins["metric"] == m).any()]
    figure, axes = _grid(len(shown))
    for axis, metric in zip(axes, shown):
        axis.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--", label="perfect calibration")
        for kind, (colour, marker, name) in PROBABILITY_STYLES.items():
            rows = bins[(bins["metric"] == metric) & (bins["probability"] == kind) & (bins["n"] > 0)]
            if rows.empty:
                continue
            sizes = MARKER_AREA * (0.5 + 3 * rows["n"] / rows["n"].max())
            axis.plot(rows["mean_predicted"], rows["observed"], color=colour, linewidth=1)
            axis.scatter(rows["mean_predicted"], rows["observed"], s=sizes, c=colour, marker=marker, label=name)
        axis.set_xlim(-0.02, 1.02)
        axis.set_ylim(-0.02, 1.02)
        axis.set_title(metric_title(metric))
        axis.set_xlabel("predicted probability")
        axis.set_ylabel("observed paraphrase share")
    if shown:
        axes[0].legend(loc="upper left")
    figure.suptitle(f"Reliability diagram — {corpus}")
    return _bytes(figure, fmt)
