"""The layouts of PEM's tables (the criteria report's declarations, `reports.task_sections`)."""

import pandas as pd

from reports.analysis.vocabulary import title_for

from .cells import PRECISION, interval, metric_labels, name_in_words, number, sentence_case
from .layouts import estimates_shown, system_correlation_layout
from .shown import Shown, as_is, best_cells, grid


def criteria_system_correlation_layout(report, frame):
    """PEM's system level: each metric against the systems' mean rating of each criterion."""
    return system_correlation_layout(report, frame, against="mean rating of the criterion")


def criteria_by_system_layout(report, frame):
    """Systems as rows, criteria as columns: each mean rating with its 95% interval."""
    has_ci = "ci_low" in frame
    cells = [
        interval(m, lo, hi) if has_ci else number(m)
        for m, lo, hi in zip(frame["mean"], frame.get("ci_low", frame["mean"]), frame.get("ci_high", frame["mean"]))
    ]
    work = frame.assign(cell=cells)
    table = grid(work, "system", "criterion", "cell")
    values = grid(work, "system", "criterion", "mean")
    table.index = values.index = pd.Index([str(s) for s in table.index], name="System")
    table.columns = values.columns = pd.Index([title_for(c) for c in table.columns])
    caption = (
        f"Ratings from 1 to 5; t-intervals over the ratings. Bold: the highest mean of each criterion. {PRECISION}"
    )
    return Shown(table, best_cells(values, axis=0), caption)


def criteria_metrics_layout(report, frame):
    """Metrics as rows; per criterion, the sentence- and system-level correlations."""
    long = frame.melt(id_vars=["metric", "criterion"], value_vars=["sentence_level", "system_level"], var_name="level")
    long["column"] = list(zip(long["criterion"], long["level"]))
    table = grid(long.assign(cell=long["value"].map(number)), "metric", "column", "cell")
    values = grid(long, "metric", "column", "value")
    index = pd.Index(metric_labels(report, table.index), name="Metric")
    header = pd.MultiIndex.from_tuples([(title_for(c), title_for(level)) for c, level in table.columns])
    table.index, table.columns, values.index, values.columns = index, header, index, header
    n_pairs, n_systems = int(frame["n_pairs"].max()), int(frame["n_systems"].max())
    caption = (
        f"Pearson's r between each metric (distances negated) and the mean rating: sentence level over "
        f"{n_pairs} pairs, system level over {n_systems} systems. Bold: the highest of each column. {PRECISION}"
    )
    return Shown(table, best_cells(values, axis=0), caption)


def criteria_pem_fit_layout(report, frame):
    """PEM's fits, one row per feature set ("PEM", "every metric"), the metrics of each named in the caption."""
    kinds, given = [], []
    for value in frame["features"]:
        kind, _, names = str(value).partition(":")
        kinds.append(sentence_case(kind.strip()))
        given.append(f"{kinds[-1]}: {name_in_words(report, 'metrics', names)}")
    result = as_is(report, frame.assign(features=kinds))
    caption = f"Features given to each fit: {'; '.join(given)}. {PRECISION}"
    return Shown(result.table, caption=caption)


def criteria_estimates_layout(report, frame):
    """Each criterion's mean rating: its groups as rows, the human-only and prediction-powered estimates beside."""
    groups = [f"{title_for(e.removesuffix('_difference'))}: {g}" for e, g in zip(frame["estimand"], frame["group"])]
    return estimates_shown(report, frame, groups, of="Mean rating of", truth="mean (the judges' mean rating")
