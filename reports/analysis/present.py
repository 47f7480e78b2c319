"""The report's tables as a paper sets them: readable words, stated precision, best values in bold.

A formatter turns a tidy table (the CSV's long form) into a `Shown`: a wide frame of strings
whose index names are the stub's headers, with a mask of the cells to set in bold and the
sentence saying what bold and the numbers mean. `html` and `latex` write a `Shown`.
Every internal name goes through `reports.analysis.vocabulary` (`title_for`, `metric_title`).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

import numpy as np
import pandas as pd

from reports.analysis import latex as latex_writer
from reports.analysis.classification import RATE_NAMES
from reports.analysis.systems import MIN_SYSTEMS_FOR_CORRELATION
from reports.analysis.vocabulary import VALUE_TITLES, metric_title, title_for
from scoring.metrics.registry import METRICS, natural_threshold_of

ORACLE_PARTS = {
    "verdict_by_label": "Verdict by label (Table 2)",
    "agreement": "Verdict = label",
    "accepted_by_label": "Accepted by the checker, by label (Table 3)",
    "accepted_by_verdict": "Accepted by the checker, by verdict",
    "table3_by_label": "Proved, all pairs, by label (Table 3)",
    "table3_by_verdict": "Proved, all pairs, by verdict (Table 3)",
    "no_test_by_category": "No accepted, by A/I category (Table 5)",
    "accuracy_by_acceptance": "Verdict = label, accepted vs rejected",
    "consistency": "Self-consistency (pairs per value)",
}
DIGITS = 2
PRECISION = "Numbers to two decimals."


@dataclass
class Shown:
    """A table for reading: `table` holds strings; `bold` (same shape) the best cells; `caption` says both."""

    table: pd.DataFrame
    bold: pd.DataFrame | None = None
    caption: str = PRECISION

    def __post_init__(self):
        # A mask of another shape silently dropped cells on the page and bold in LaTeX: refuse it.
        if self.bold is not None and self.bold.shape != self.table.shape:
            raise ValueError(f"bold mask {self.bold.shape} does not match the table {self.table.shape}")


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float | np.floating) and np.isnan(value))


def _number(value, digits=DIGITS):
    return "–" if _missing(value) else f"{value:.{digits}f}"


def _interval(value, low, high):
    """A value and its 95% interval, as "0.73 [0.71, 0.74]"."""
    if low is None or high is None or low != low or high != high:
        return _number(value)
    return f"{_number(value)} [{_number(low)}, {_number(high)}]"


def _ordered(values, order):
    present = list(dict.fromkeys(values))
    return [v for v in order if v in present] + [v for v in present if v not in order]


def _corpus_order(report, frame):
    """The corpora of `frame` in the report's order, then Global and MBD, then any other."""
    return _ordered(frame["corpus"], [*report.corpora, "Global", "MBD"])


def _metric_labels(report, metrics):
    return [metric_title(m, report.directions.get(m)) for m in metrics]


def best_cells(values: pd.DataFrame, *, axis: int, higher=True) -> pd.DataFrame:
    """True where a cell holds the best value of its column (axis=0) or row (axis=1); ties all bold."""
    values = values.apply(pd.to_numeric, errors="coerce").astype(float)
    best = values.max(axis=axis) if higher else values.min(axis=axis)
    return values.eq(best, axis=1 - axis) & values.notna()


def _grid(frame, row, column, value, *, rows_order=None, columns_order=None):
    """A pivot of `value` keeping the given (or first-seen) orders of rows and columns."""
    table = frame.pivot_table(index=row, columns=column, values=value, aggfunc="first", sort=False, dropna=False)
    rows = rows_order if rows_order is not None else list(dict.fromkeys(frame[row]))
    columns = columns_order if columns_order is not None else list(dict.fromkeys(frame[column]))
    return table.reindex(index=rows, columns=columns)


def _metrics_by_corpus(report, frame, cells, *, sub=None):
    """One row per metric; one column per corpus (and per `sub` value inside each corpus when given)."""
    frame = frame.assign(cell=cells)
    columns = "corpus" if sub is None else ["corpus", sub]
    table = frame.pivot_table(index="metric", columns=columns, values="cell", aggfunc="first", sort=False)
    metrics = list(dict.fromkeys(frame["metric"]))
    corpora = _corpus_order(report, frame)
    if sub is None:
        order = corpora
    else:
        subs = list(dict.fromkeys(frame[sub]))
        order = pd.MultiIndex.from_tuples([(c, s) for c in corpora for s in subs])
    table = table.reindex(index=metrics, columns=order)
    return _relabel(report, table)


def _relabel(report, table):
    """Metric rows named as printed (with arrows), corpus and sub-column headers in the reader's words."""
    table = table.copy()
    table.index = pd.Index(_metric_labels(report, table.index), name="Metric")
    if isinstance(table.columns, pd.MultiIndex):
        table.columns = pd.MultiIndex.from_tuples([(str(c), title_for(s)) for c, s in table.columns])
    else:
        table.columns = pd.Index([str(c) for c in table.columns])
    return table


def _table1(report, frame):
    cells = [f"{_number(m)} ± {_number(s)}" if n else "–" for m, s, n in zip(frame["mean"], frame["std"], frame["n"])]
    table = _metrics_by_corpus(report, frame, cells, sub="label")
    return Shown(table, caption=f"Labels as the report reads them (judges' majority or gold). {PRECISION}")


def _table2(report, frame):
    def count_and_share(kind):
        return [f"{n} : {_number(100 * s, 0)}%" for n, s in zip(frame[f"n_{kind}"], frame[f"share_{kind}"])]

    columns = {
        "Size": frame["size"].astype(str).to_numpy(),
        "Paraphrase": count_and_share("paraphrase"),
        "Non-paraphrase": count_and_share("non_paraphrase"),
        "Unlabelled": frame["n_unlabelled"].astype(str).to_numpy(),
        "Ties": frame["n_ties"].astype(str).to_numpy(),
    }
    table = pd.DataFrame(columns, index=pd.Index(frame["corpus"].astype(str), name="Corpus"))
    return Shown(table, caption="Pairs per corpus; labels as count : share of the labelled pairs.")


def _answer_words(setting) -> str:
    """A yes/no answer setting in words: its signature writes "Yes/No:10539/5230", the token ids after the colon."""
    return str(setting).partition(":")[0]


def _threshold_note(row):
    """After Table 3's threshold: the tied range when several reach the best accuracy; at 0, the answer setting."""
    if row["threshold_kind"] == "a_priori":
        return f" (answer {_answer_words(row['answer'])})" if row.get("answer") else ""
    low, high = row.get("threshold_low"), row.get("threshold_high")
    if low is None or low != low or low == high:
        return ""
    return f" (tied {_number(low)} to {_number(high)})"


# Table 3's measures in the paper's order: the threshold, then the rates it gives.
TABLE3_MEASURES = ("threshold", *RATE_NAMES)


def _table3_block(report, metric, kind):
    """The stub of one metric's block of rows: its printed name, and its natural threshold (ParaPLUIE's 0)."""
    title = metric_title(metric, report.directions.get(metric))
    return f"{title}, threshold {natural_threshold_of(metric):g}" if kind == "a_priori" else title


def _table3(report, frame):
    """As the paper sets it: one block of rows per metric (ParaPLUIE again at 0), one column per corpus and the MBD."""
    records = []
    for row in frame.to_dict("records"):
        block = _table3_block(report, row["metric"], row["threshold_kind"])
        for key in TABLE3_MEASURES:
            ci = row.get(f"{key}_ci95")
            value = row[key]
            # An MBD interval that prints as [x, x] is no interval: every balanced draw held the same pairs.
            has_ci = ci is not None and ci == ci and _number(value - ci) != _number(value + ci)
            cell = _interval(value, value - ci, value + ci) if has_ci else _number(value)
            if key == "threshold":
                cell += _threshold_note(row)
            records.append({"corpus": row["corpus"], "row": (block, title_for(key)), "value": value, "cell": cell})
    long = pd.DataFrame(records)
    rows = list(dict.fromkeys(long["row"]))
    columns = _corpus_order(report, long)
    cells = _grid(long, "row", "corpus", "cell", rows_order=rows, columns_order=columns)
    values = _grid(long, "row", "corpus", "value", rows_order=rows, columns_order=columns)
    # Bold: the best metric for each rate and corpus (the paper colours each rate's best alike).
    measures = pd.Series([measure for _block, measure in rows], index=values.index)
    bold = pd.DataFrame(False, index=values.index, columns=values.columns)
    for measure in measures.unique():
        if measure != title_for("threshold"):
            part = measures == measure
            bold.loc[part.to_numpy()] = best_cells(values.loc[part.to_numpy()], axis=0).to_numpy()
    index = pd.MultiIndex.from_tuples(rows, names=["Metric", "Measure"])
    header = pd.Index([str(c) for c in columns])
    cells.index, cells.columns, bold.index, bold.columns = index, header, index, header
    caption = (
        "The threshold is the one with the best accuracy (of tied ones the strictest, the tied range after it); "
        "ParaPLUIE again at its natural threshold 0 (score ≥ 0 is a paraphrase), with its yes/no answer setting. "
        "MBD: mean over the balanced draws with its 95% interval (none when every draw held the same pairs: "
        "a corpus with fewer pairs of a label than a draw takes). "
        f"Bold: the best metric for each rate in each column. {PRECISION}"
    )
    return Shown(cells, bold, caption)


def _table4(report, frame):
    table = _metrics_by_corpus(report, frame, frame["pearson_r"].map(_number), sub="label")
    values = _metrics_by_corpus(report, frame, frame["pearson_r"].abs(), sub="label")
    caption = (
        "Pearson's r; the edit distance is Levenshtein's, normalised by the longer sentence. "
        f"Bold: the weakest correlation (in absolute value) of each column. {PRECISION}"
    )
    return Shown(table, best_cells(values, axis=0, higher=False), caption)


def _eer(report, frame):
    long = frame.melt(id_vars=["metric", "corpus"], value_vars=["eer", "threshold"], var_name="measure")
    table = _metrics_by_corpus(report, long, long["value"].map(_number), sub="measure")
    values = _metrics_by_corpus(report, long, long["value"], sub="measure")
    bold = best_cells(values, axis=0, higher=False) & (values.columns.get_level_values(1) == title_for("eer"))
    caption = (
        f"Each metric's EER beside the threshold where it is reached. Bold: the lowest EER of each column. {PRECISION}"
    )
    return Shown(table, bold, caption)


def _by_corpus(report, frame, row, cells, name):
    table = _grid(frame.assign(cell=cells), row, "corpus", "cell", columns_order=_corpus_order(report, frame))
    table.index = pd.Index([title_for(r) for r in table.index], name=name)
    table.columns = pd.Index([str(c) for c in table.columns])
    return table


def _labels(report, frame):
    cells = [f"{n} ({_number(100 * s, 0)}%)" for n, s in zip(frame["n"], frame["share"])]
    table = _by_corpus(report, frame, "answer", cells, "Answer")
    return Shown(table, caption="Judgments per answer, and their share within the corpus (whole percent).")


def _agreement(report, frame):
    cells = [f"{_number(v)} (n={n})" for v, n in zip(frame["value"], frame["n_pairs"])]
    table = _by_corpus(report, frame, "statistic", cells, "Statistic")
    return Shown(
        table, caption=f"Agreement on the pairs two or more judges answered; n: pairs (or judge pairs). {PRECISION}"
    )


def _auc(report, frame):
    cells = [_interval(a, lo, hi) for a, lo, hi in zip(frame["auc"], frame["ci95_low"], frame["ci95_high"])]
    table = _metrics_by_corpus(report, frame, cells)
    bold = best_cells(_metrics_by_corpus(report, frame, frame["auc"]), axis=0)
    caption = f"Intervals in brackets. Bold: the highest AUC of each column. {PRECISION}"
    return Shown(table, bold, caption)


def _rank_correlation(report, frame):
    long = frame.melt(id_vars=["metric", "corpus"], value_vars=["spearman_rho", "kendall_tau"], var_name="measure")
    table = _metrics_by_corpus(report, long, long["value"].map(_number), sub="measure")
    bold = best_cells(_metrics_by_corpus(report, long, long["value"], sub="measure"), axis=0)
    caption = f"Distances negated. Bold: the highest of each column. {PRECISION}"
    return Shown(table, bold, caption)


def _oracle(report, frame):
    """One row per figure: what it counts (label, verdict, checker, group), count / n and share."""
    of = [
        " · ".join(title_for(v) for v in values if v not in ("all", "")) or "Labelled pairs"
        for values in zip(frame["label"], frame["verdict"], frame["checker"], frame["group"])
    ]
    index = pd.MultiIndex.from_arrays(
        [_metric_labels(report, frame["metric"]), frame["part"].map(ORACLE_PARTS), of], names=["Metric", "Part", "Of"]
    )
    table = pd.DataFrame(
        {
            "Count / n": [f"{c} / {n}" for c, n in zip(frame["count"], frame["n"])],
            "Share": [f"{_number(100 * s, 0)}%" if n else "–" for s, n in zip(frame["share"], frame["n"])],
        },
        index=index,
    )
    caption = (
        "Shares in whole percent. The embedded SmolLM2-135M is a working pipeline, not a good judge (near chance)."
    )
    return Shown(table, caption=caption)


NAMED_VALUES = ("answer", "statistic", "group_by", "label", "english_level", "criterion", "row")
METRIC_VALUES = ("metric", "metric_a", "metric_b")
# "all" rows of the span tables: every judge, corpus or system together.
ALL_OF = {"judge": "All judges", "corpus": "All corpora", "system": "All systems"}


def _sentence_case(text):
    return text[:1].upper() + text[1:]


def _name(report, column, value):
    """A name in a table cell in the reader's words: a metric's printed name, a label, or the value as given."""
    if column in ALL_OF and value == "all":
        return ALL_OF[column]
    if column in METRIC_VALUES or (column == "against" and value in METRICS):
        return metric_title(value, report.directions.get(value))
    if column == "metrics":  # PEM's fit: the metrics it was given, comma-separated
        names = [name.strip() for name in str(value).split(",") if name.strip()]
        return ", ".join(metric_title(name) for name in names) or "–"
    if column in (*NAMED_VALUES, "against"):
        return _sentence_case(title_for(value))
    return str(value)


def _cell(report, column, value):
    """Any value as the page prints it: numbers to the stated precision, Yes/No, a dash for nothing."""
    if isinstance(value, bool | np.bool_):
        return VALUE_TITLES[bool(value)]
    if _missing(value):
        return VALUE_TITLES[None]
    if isinstance(value, float | np.floating):
        return _number(value)
    if isinstance(value, int | np.integer):
        return str(value)
    return _name(report, column, value)


def _as_is(report, frame):
    """Tables without a layout of their own: names in the reader's words, floats to the stated precision."""
    table = pd.DataFrame({column: [_cell(report, column, v) for v in frame[column]] for column in frame.columns})
    table.columns = [title_for(c) for c in table.columns]
    return Shown(table.reset_index(drop=True), caption=PRECISION)


def _better(values, direction):
    """True at the best of a row of numbers (ties all), the highest unless `direction` is lower."""
    values = pd.to_numeric(pd.Series(values), errors="coerce").astype(float)
    if values.isna().all():
        return [False] * len(values)
    best = values.min() if direction == "lower" else values.max()
    return list(values.eq(best) & values.notna())


def _systems(report, frame):
    """Measures as rows, systems as columns: with every metric scored the table stays within the page."""
    systems = [str(s) for s in frame["system"]]
    rows, bold = {}, {}

    def add(name, cells, values=None, direction="higher"):
        if all(c == "–" for c in cells):
            return  # a measure this task type has not got (no paraphrase label on a criteria campaign)
        rows[name] = cells
        bold[name] = [False] * len(cells) if values is None else _better(values, direction)

    add("Pairs", [str(n) for n in frame["n_pairs"]])
    add("Labelled", [str(n) if n else "–" for n in frame["n_labelled"]])
    rates = frame["paraphrase_rate"]
    add(
        "Paraphrase rate [95% CI]",
        [_interval(r, lo, hi) for r, lo, hi in zip(rates, frame["ci_low"], frame["ci_high"])],
        rates,
    )
    add(title_for("mean_ordinal"), [_number(v) for v in frame["mean_ordinal"]], frame["mean_ordinal"])
    if frame["mean_ordinal"].notna().any():  # without 5-way answers (criteria, spans) no one answered Don't know
        add(title_for("share_dont_know"), [_number(v) for v in frame["share_dont_know"]])
    for metric in (m for m in report.metrics if m in frame.columns):
        direction = report.directions.get(metric)
        add(metric_title(metric, direction), [_number(v) for v in frame[metric]], frame[metric], direction)
    index = pd.Index(list(rows), name="Measure")
    table = pd.DataFrame(list(rows.values()), index=index, columns=systems)
    mask = pd.DataFrame(list(bold.values()), index=index, columns=systems)
    return Shown(table, mask, _systems_caption(report, rows))


def _systems_caption(report, rows):
    """What the systems table holds, naming only the rows it has (a criteria or span campaign has no answers)."""
    parts = ["its pairs"]
    if "Paraphrase rate [95% CI]" in rows:
        source = getattr(getattr(report, "settings", None), "label_source", "human")
        parts.append(
            f"the paraphrase rate of its pairs ({title_for(source).lower()} labels), the 95% interval over "
            "resampled sources"
        )
    if title_for("mean_ordinal") in rows:
        parts.append("the judges' mean answer and their share of Don't know")
    parts.append("each metric's mean score")
    return (
        f"Per system: {', '.join(parts[:-1])} and {parts[-1]}; a measure without any value is left out. "
        f"Bold: the best system of each row (each metric in its own direction). {PRECISION}"
    )


def _system_pairwise(report, frame):
    result = _as_is(report, frame)
    p_values = frame[["p_sign", "p_bootstrap"]].astype(float).lt(0.05)
    bold = pd.DataFrame(False, index=result.table.index, columns=result.table.columns)
    for column in ("p_sign", "p_bootstrap"):
        bold[title_for(column)] = p_values[column].to_numpy()
    caption = (
        "Every two systems on the sources both have labelled pairs for: mean difference of their rates, "
        f"sources each one wins, and two-sided p-values. Bold: p below 0.05. {PRECISION}"
    )
    return Shown(result.table, bold, caption)


def _system_correlation(report, frame, against="paraphrase rate"):
    """Metrics as rows (and criteria, when the frame has them); Pearson, Spearman, Kendall with their intervals."""
    columns = {"Systems": [str(n) for n in frame["n_systems"]]}
    values = {}
    for name in ("pearson", "spearman", "kendall"):
        heading = f"{title_for(name)} [95% CI]"
        columns[heading] = [
            _interval(v, lo, hi) for v, lo, hi in zip(frame[name], frame[f"{name}_ci_low"], frame[f"{name}_ci_high"])
        ]
        values[heading] = frame[name].to_numpy(float)
    index = pd.Index(_metric_labels(report, frame["metric"]), name="Metric")
    if "criterion" in frame:
        criteria = [_sentence_case(title_for(c)) for c in frame["criterion"]]
        index = pd.MultiIndex.from_arrays([index, criteria], names=["Metric", "Criterion"])
    table = pd.DataFrame(columns, index=index)
    bold = pd.DataFrame(False, index=index, columns=table.columns)
    for heading, column in values.items():
        bold[heading] = _better(column, "higher")
    caption = (
        f"Each system's mean score (distances negated) against its {against}; 95% intervals over resampled "
        f"sources. Bold: the highest of each column. {PRECISION}"
    )
    return Shown(table, bold, caption)


def estimates_layout(report, frame):
    """Groups as rows: the human-only and the prediction-powered estimate side by side, and what the metric saved."""
    rates = frame["estimand"].str.startswith("paraphrase_rate").all()
    groups = [
        (str(g) if rates else f"{title_for(e.removesuffix('_difference'))}: {g}")
        + (" (difference)" if e.endswith("_difference") else "")
        for e, g in zip(frame["estimand"], frame["group"])
    ]
    table = pd.DataFrame(
        {
            "Pairs": ["–" if _missing(n) else str(int(n)) for n in frame["n_pairs"]],
            "Labelled": [str(int(n)) for n in frame["n_labelled"]],
            "Judges only [95% CI]": [
                _interval(v, lo, hi) for v, lo, hi in zip(frame["human"], frame["human_low"], frame["human_high"])
            ],
            "Prediction-powered [95% CI]": [
                _interval(v, lo, hi) for v, lo, hi in zip(frame["ppi"], frame["ppi_low"], frame["ppi_high"])
            ],
            "Effective labelled pairs": [_number(n, 0) for n in frame["n_effective"]],
        },
        index=pd.Index(groups, name="Paraphrase rate of" if rates else "Mean rating of"),
    )
    first = frame.iloc[0]
    predictor = metric_title(first["predictor"], report.directions.get(first["predictor"]))
    if first["chosen_by"] == "every pair labelled":
        chosen = "none needed, every pair has a label (both columns are the labels' own)"
    elif first["chosen_by"] == "researcher's choice":
        chosen = f"{predictor}, the researcher's choice"
    else:
        chosen = f"{predictor}, chosen on the judged pairs by cross-fitting ({first['predictor_folds']} of the folds)"
    truth = "rate (the judges' majority" if rates else "mean (the judges' mean rating"
    caption = (
        f"Each interval holds the true {truth} over every pair) in 95% of campaigns, "
        "whatever the metric's quality; a better metric narrows the prediction-powered one. "
        f"Predictor: {chosen}. Effective labelled pairs: how many a judges-only interval would need "
        "for the same width. "
        f"{PRECISION}"
    )
    return Shown(table, caption=caption)


def criteria_system_correlation_layout(report, frame):
    """PEM's system level: each metric against the systems' mean rating of each criterion."""
    return _system_correlation(report, frame, against="mean rating of the criterion")


def criteria_by_system_layout(report, frame):
    """Systems as rows, criteria as columns: each mean rating with its 95% interval."""
    has_ci = "ci_low" in frame
    cells = [
        _interval(m, lo, hi) if has_ci else _number(m)
        for m, lo, hi in zip(frame["mean"], frame.get("ci_low", frame["mean"]), frame.get("ci_high", frame["mean"]))
    ]
    work = frame.assign(cell=cells)
    table = _grid(work, "system", "criterion", "cell")
    values = _grid(work, "system", "criterion", "mean")
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
    table = _grid(long.assign(cell=long["value"].map(_number)), "metric", "column", "cell")
    values = _grid(long, "metric", "column", "value")
    index = pd.Index(_metric_labels(report, table.index), name="Metric")
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
        kinds.append(_sentence_case(kind.strip()))
        given.append(f"{kinds[-1]}: {_name(report, 'metrics', names)}")
    result = _as_is(report, frame.assign(features=kinds))
    caption = f"Features given to each fit: {'; '.join(given)}. {PRECISION}"
    return Shown(result.table, caption=caption)


def selection_layout(report, frame):
    """One row per generator, template and candidate group: the judges-only and prediction-powered rates."""
    index = pd.MultiIndex.from_arrays(
        [frame["generator"].astype(str), frame["template"].astype(str), frame["candidates"].astype(str)],
        names=["Generator", "Template", "Candidates"],
    )
    table = pd.DataFrame(
        {
            "Pairs": [str(int(n)) for n in frame["n_pairs"]],
            "Judged": [str(int(n)) for n in frame["n_labelled"]],
            "Judges only [95% CI]": [
                _interval(v, lo, hi) for v, lo, hi in zip(frame["human"], frame["human_low"], frame["human_high"])
            ],
            "Prediction-powered [95% CI]": [
                _interval(v, lo, hi) for v, lo, hi in zip(frame["ppi"], frame["ppi_low"], frame["ppi_high"])
            ],
        },
        index=index,
    )
    predictor = str(frame["predictor"].iloc[0] or "")
    named = metric_title(predictor, report.directions.get(predictor)) if predictor else "none (judges only)"
    caption = (
        "Judges got every selected candidate and a random share of the unselected ones, so each rate is "
        "unbiased for its whole group; a positive difference is what the filter gained. "
        f"Predictor: {named}. {PRECISION}"
    )
    return Shown(table, caption=caption)


def rounds_layout(report, frame):
    """One row per round, its detector and its selection."""
    table = pd.DataFrame(
        {
            "Detector": frame["detector"].astype(str),
            "Trained on": [_number(n, 0) for n in frame["detector_train_pairs"]],
            "Held-out span F1": [_number(v, 3) for v in frame["detector_f1"]],
            "Candidates": [str(int(n)) for n in frame["candidates"]],
            "Selected": [
                f"{int(n)} ({_number(100 * share, 1)}%)" for n, share in zip(frame["selected"], frame["selected_share"])
            ],
            "Sent to judges": [str(int(n)) for n in frame["sent"]],
            "Paraphrase rate of the selected (judged)": [
                f"{_number(rate, 3)} ({int(n)})"
                for rate, n in zip(frame["paraphrase_rate_selected"], frame["judged_selected"])
            ],
        },
        index=pd.Index([str(int(n)) for n in frame["round"]], name="Round"),
    )
    return Shown(table, caption=f"Each round's detector was trained on every tagging before the round. {PRECISION}")


@dataclass(frozen=True)
class Table:
    """A report table, declared once: its file name, title, the step computing it, its layout, its page section."""

    name: str  # the CSV's and the download's name
    title: str  # what it shows, without a number: LaTeX numbers its tables itself
    build: str = ""  # the step group of `report._Steps` computing it; "" for a table a task type reads itself
    layout: Callable | None = None  # (report, frame) -> Shown or frame, as the page and LaTeX print it; None: as is
    section: str | None = None  # the slug of the page section showing it in the 5-way report; None: a download only
    paper: str = ""  # the ParaPLUIE paper's table it reproduces ("Table 3"), if any

    @property
    def heading(self) -> str:
        """The page's heading: the paper's number first ("Table 3 — …"), as a reader of the paper looks for it."""
        return f"{self.paper} — {self.title}" if self.paper else self.title

    @property
    def caption_title(self) -> str:
        """The title as a LaTeX caption opens (after LaTeX's own "Table N:"): the paper's number as a reference."""
        return f"{self.title} (the paper's {self.paper})" if self.paper else self.title


# The 5-way report's tables, in the order a reader meets their files (README.md lists their columns).
TABLES = (
    Table(
        "table1",
        "Mean ± standard deviation of each metric, by label",
        "classification",
        _table1,
        "scores",
        paper="Table 1",
    ),
    Table("table2", "Corpus sizes and labels", "judges", _table2, "corpora", paper="Table 2"),
    Table(
        "table3",
        "Accuracy, F1, recall and precision at each metric's best a-posteriori threshold, and the MBD",
        "classification",
        _table3,
        "classification",
        paper="Table 3",
    ),
    Table(
        "table4",
        "Pearson correlation with the edit distance inside each class",
        "classification",
        _table4,
        "scores",
        paper="Table 4",
    ),
    Table("eer", "Equal error rate (non-paraphrases as spoofs)", "classification", _eer, "classification"),
    Table("labels", "Answers given by the judges", "judges", _labels, "judges"),
    Table("agreement", "Inter-annotator agreement", "judges", _agreement, "agreement"),
    Table("cohen", "Cohen's kappa of every two judges sharing enough pairs", "judges"),
    Table("auc", "ROC AUC with bootstrap 95% CI", "auc", _auc, "classification"),
    Table("auc_tests", "Paired bootstrap tests of AUC differences", "auc", section="classification"),
    Table(
        "rank_correlation",
        "Rank correlation with the labels (judges: mean 4-point answer; gold: the 0/1 label)",
        "rankings",
        _rank_correlation,
        "ranking",
    ),
    Table("by_english_level", "Judges by English level", "judges", section="judges"),
    Table("by_group", "Metrics by generator, template and judges' English level", "judges", section="groups"),
    Table("curves_threshold", "Accuracy, F1, recall and precision at every threshold", "classification"),
    Table("curves_rank", "Accuracy, F1, recall and precision at every rank", "classification"),
    Table(
        "oracle",
        "LLM oracle (LLM vote, LLM vote checked): verdicts by label, checker acceptance, accuracy when accepted, "
        "self-consistency",
        "oracle",
        _oracle,
        "oracle",
    ),
    Table(
        "systems",
        "Systems side by side",
        "systems",
        _systems,
        "systems",
    ),
    Table(
        "system_pairwise",
        "Systems compared pairwise on shared sources (sign test, paired bootstrap)",
        "systems",
        _system_pairwise,
        "systems",
    ),
    Table(
        "estimates",
        "Paraphrase rates estimated from the judged pairs with and without the metric (prediction-powered, PPI++)",
        "estimates",
        estimates_layout,
        "estimates",
    ),
    Table(
        "selection",
        "Generation's selection stage: the paraphrase rate of selected against unselected candidates "
        "(a random share of them judged), by generator and template, prediction-powered",
        "estimates",
        selection_layout,
        "estimates",
    ),
    Table(
        "collection_rounds",
        "ParaTag's collection loop (section 4.3): each round's detector (training pairs, held-out span F1), "
        "the share of candidates it selected, and the judges' paraphrase rate of the selected ones",
        "estimates",
        rounds_layout,
        "estimates",
    ),
    Table(
        "system_correlation",
        "System-level correlation of each metric with the systems' paraphrase rates",
        "systems",
        _system_correlation,
        "systems",
    ),
)
SPECS = {table.name: table for table in TABLES}
TITLES = {table.name: table.heading for table in TABLES}


def tables_in(section: str) -> tuple[str, ...]:
    """The 5-way report's tables a page section shows, in file order."""
    return tuple(table.name for table in TABLES if table.section == section)


def spec_of(report, name) -> Table:
    """The declaration of table `name` of `report` (the report's own, or one its task type added)."""
    specs = getattr(report, "specs", None) or SPECS
    return specs.get(name) or Table(name, title_for(name))


def shown(report, name) -> Shown | None:
    """The table `name` of `report` laid out for reading; None when it has no rows."""
    frame = report.tables[name]
    if frame.empty:
        return None
    result = (spec_of(report, name).layout or _as_is)(report, frame)
    return result if isinstance(result, Shown) else Shown(result)


DASHES = re.compile(r"[–\s\[\],]*")
EMPTY_REASONS = {
    "system_pairwise": "Fewer than two systems with labelled pairs: there is nothing to compare.",
    "system_correlation": (
        f"Fewer than {MIN_SYSTEMS_FOR_CORRELATION} systems with labelled pairs: a system-level correlation "
        f"needs at least {MIN_SYSTEMS_FOR_CORRELATION} systems to mean anything."
    ),
}


def empty_reason(report, name, laid_out: Shown | None = None) -> str | None:
    """Why table `name` is not shown (one line), or None: no rows, every cell a dash, or too few systems.

    `laid_out`: the table's `shown`, when the caller has it (laying out a table twice doubles a page's work).
    """
    frame = report.tables.get(name)
    # Any system-level correlation (the report's, PEM's per criterion) needs enough systems to mean anything.
    if frame is not None and len(frame) and {"n_systems", "meaningful"} <= set(frame.columns):
        if not frame["n_systems"].ge(MIN_SYSTEMS_FOR_CORRELATION).any():
            return EMPTY_REASONS["system_correlation"]
    if frame is not None and _no_measure(frame):
        return EMPTY_REASONS.get(name, NOTHING_MEASURED)
    result = None if frame is None or frame.empty else laid_out or shown(report, name)
    if result is None or all(DASHES.fullmatch(str(cell)) for cell in result.table.to_numpy().ravel()):
        return EMPTY_REASONS.get(name, "Nothing to show yet: every cell would be a dash.")
    return None


NOTHING_MEASURED = "Nothing measured yet: every figure of this table would be a dash (too few pairs or judges)."


def _no_measure(frame) -> bool:
    """Rows but no measure: every float column (the measures; counts are integers, names strings) is empty.

    Such a table prints its names and counts beside dashes only, as a span table with one judge does.
    """
    measures = frame.select_dtypes("floating")
    return len(frame) > 0 and measures.shape[1] > 0 and measures.isna().all().all()


# Columns (stub included) above which a table is printed on a landscape page (report.css).
PORTRAIT_COLUMNS = 9


def is_wide(result: Shown) -> bool:
    stub = 0 if isinstance(result.table.index, pd.RangeIndex) else result.table.index.nlevels
    return stub + result.table.shape[1] > PORTRAIT_COLUMNS


def wide(report, name) -> pd.DataFrame:
    """The table `name` as a wide frame of formatted strings (empty when the table is)."""
    result = shown(report, name)
    return pd.DataFrame() if result is None else result.table


def csv_comments(report, name, title=None) -> list[str]:
    """The lines a CSV of table `name` opens with (each written after "# "): its title, then its names in words.

    The CSV keeps the analysis' names (stable for scripts); these lines say what each
    column, metric and named value is, in the words the page and the LaTeX use.
    """
    frame = report.tables[name]
    lines = [
        title or spec_of(report, name).heading,
        "Read with pandas.read_csv(path, comment='#'); columns as named below.",
    ]
    lines += [f"column {column}: {title_for(column)}" for column in frame.columns if title_for(column) != column]
    for column in (c for c in METRIC_VALUES if c in frame.columns):
        metrics = list(dict.fromkeys(frame[column].dropna()))
        lines += [f"{column} {m}: {text}" for m, text in zip(metrics, _metric_labels(report, metrics))]
    for column in (c for c in NAMED_VALUES if c in frame.columns):
        values = [str(v) for v in dict.fromkeys(frame[column].dropna())]
        lines += [f"{column} {v}: {title_for(v)}" for v in values if title_for(v) != v]
    if any(frame[c].dtype == bool for c in frame.columns):
        lines.append("True/False columns: shown as Yes/No on the page and in LaTeX.")
    return lines


# Writing a Shown table.


def html(report, name) -> str:
    """The table as HTML, its caption after it: header cells with `scope`, stub headers in words, best cells bold."""
    result = shown(report, name)
    if result is None:
        return '<p class="muted">Nothing to show yet.</p>'
    return table_html(result, f"caption-{name}") + caption_html(result, f"caption-{name}")


def caption_html(result: Shown, caption_id: str) -> str:
    """The caption as a paragraph of its own: set outside a wide table's scrolling box, it wraps at the page's width
    (a <caption> is as wide as its table, and was cut off with it)."""
    return f'<p class="table-caption" id="{escape(caption_id)}">{escape(result.caption)}</p>'


def table_html(result: Shown, caption_id: str) -> str:
    """The table as HTML, described by the caption of id `caption_id` (`caption_html`)."""
    table = result.table
    bold = result.bold if result.bold is not None else pd.DataFrame(False, index=table.index, columns=table.columns)
    stub = [] if isinstance(table.index, pd.RangeIndex) else list(table.index.names)
    parts = [f'<table class="report-table" aria-describedby="{escape(caption_id)}">', "<thead>"]
    parts += _header_rows(table.columns, stub)
    parts.append("</thead><tbody>")
    for position, (_key, row) in enumerate(table.iterrows()):
        cells = _stub_cells(table.index, position) if stub else []
        for column, (value, strong) in enumerate(zip(row, bold.iloc[position], strict=True)):
            text = escape("–" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value))
            # Numbers align right, names left; without a stub the first column names the row and stays in view.
            kind = "num" if NUMERIC.match(text) else "text"
            kind += " stub" if not stub and column == 0 else ""
            cells.append(f'<td class="{kind}">{f"<strong>{text}</strong>" if strong else text}</td>')
        parts.append(f"<tr>{''.join(cells)}</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


NUMERIC = re.compile(r"[-–−+\d.]")
STUB = ' class="stub"'  # the first column, kept in view while a wide table scrolls (report.css)


def _header_rows(columns, stub):
    levels = columns.nlevels
    rows = []
    for level in range(levels):
        cells = []
        if level == 0:
            cells += [
                f'<th scope="col" rowspan="{levels}"{STUB if i == 0 else ""}>{escape(str(s or "Measure"))}</th>'
                for i, s in enumerate(stub)
            ]
        if level < levels - 1:
            for text, span in _runs([tuple(c[: level + 1]) for c in columns]):
                cells.append(f'<th scope="colgroup" colspan="{span}">{escape(str(text[-1]))}</th>')
        else:
            names = [c[-1] if isinstance(c, tuple) else c for c in columns]
            cells += [f'<th scope="col">{escape(str(n))}</th>' for n in names]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return rows


def _stub_cells(index, position):
    """Row headers; an outer level spans its block of rows (`rowgroup`), shown once."""
    key = index[position]
    key = key if isinstance(key, tuple) else (key,)
    cells = []
    for level, value in enumerate(key):
        if level < len(key) - 1:
            prefixes = [tuple(k[: level + 1]) for k in index]
            if position and prefixes[position - 1] == prefixes[position]:
                continue
            span = next((span for text, span, start in _runs_at(prefixes) if start == position), 1)
            cells.append(f'<th scope="rowgroup" rowspan="{span}"{STUB if level == 0 else ""}>{escape(str(value))}</th>')
        else:
            cells.append(f'<th scope="row"{STUB if level == 0 else ""}>{escape(str(value))}</th>')
    return cells


def _runs(values):
    return [(text, span) for text, span, _ in _runs_at(values)]


def _runs_at(values):
    """(value, length, start) of each run of equal consecutive values."""
    runs = []
    for position, value in enumerate(values):
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1, position])
    return [tuple(run) for run in runs]


def latex(report, name) -> str | None:
    """The table as a booktabs LaTeX table, caption and label included; None when it has no rows.

    The caption opens with the table's title: LaTeX numbers the table, the paper's number follows as a reference.
    """
    result = shown(report, name)
    if result is None:
        return None
    flat, bold = _flat(result)
    caption = f"{spec_of(report, name).caption_title}. {result.caption}"
    stub = 0 if isinstance(result.table.index, pd.RangeIndex) else result.table.index.nlevels
    return latex_writer.latex_table(flat, caption=caption, label=f"tab:{name}", bold=bold, stub=max(stub, 1))


def _flat(result: Shown):
    """The stub's levels as leading columns (an outer level shown once per block), for LaTeX."""
    table = result.table
    bold = result.bold if result.bold is not None else pd.DataFrame(False, index=table.index, columns=table.columns)
    if isinstance(table.index, pd.RangeIndex):
        return table, bold
    names = [n or "" for n in table.index.names]
    keys = [k if isinstance(k, tuple) else (k,) for k in table.index]
    stub = {}
    for level, name in enumerate(names):
        shown_values = [
            "" if level < len(names) - 1 and i and keys[i - 1][: level + 1] == k[: level + 1] else str(k[level])
            for i, k in enumerate(keys)
        ]
        stub[(name, "") if table.columns.nlevels == 2 else name] = shown_values
    stub_frame = pd.DataFrame(stub)
    if table.columns.nlevels == 2:
        stub_frame.columns = pd.MultiIndex.from_tuples(stub_frame.columns)
    flat = pd.concat([stub_frame, table.reset_index(drop=True)], axis=1)
    flat_bold = pd.concat([stub_frame.map(lambda _: False), bold.reset_index(drop=True)], axis=1)
    return flat, flat_bold
