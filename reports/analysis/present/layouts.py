"""The layouts of the report's own tables (`declared.TABLES`): each turns a tidy table into a `Shown`.

A layout reads the CSV's long form and sets it as the paper does: readable words, stated precision,
the best values in bold, and the caption saying what bold and the numbers mean.
"""

import pandas as pd

from metrics.registry import natural_threshold_of
from reports.analysis.classification import RATE_NAMES
from reports.analysis.vocabulary import metric_title, title_for

from .cells import PRECISION, interval, metric_labels, missing, number, sentence_case
from .shown import Shown, as_is, best_cells, best_in_row, corpus_order, grid, metrics_by_corpus

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


def table1_layout(report, frame):
    cells = [f"{number(m)} ± {number(s)}" if n else "–" for m, s, n in zip(frame["mean"], frame["std"], frame["n"])]
    table = metrics_by_corpus(report, frame, cells, sub="label")
    return Shown(table, caption=f"Labels as the report reads them (judges' majority or gold). {PRECISION}")


def table2_layout(report, frame):
    def count_and_share(kind):
        return [f"{n} : {number(100 * s, 0)}%" for n, s in zip(frame[f"n_{kind}"], frame[f"share_{kind}"])]

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
    # A range that prints as one number is no range to the reader ("0.52 (tied 0.52 to 0.52)").
    if low is None or low != low or number(low) == number(high):
        return ""
    return f" (tied {number(low)} to {number(high)})"


# Table 3's measures in the paper's order: the threshold, then the rates it gives.
TABLE3_MEASURES = ("threshold", *RATE_NAMES)


def _table3_block(report, metric, kind):
    """The stub of one metric's block of rows: its printed name, and its natural threshold (ParaPLUIE's 0)."""
    title = metric_title(metric, report.directions.get(metric))
    return f"{title}, threshold {natural_threshold_of(metric):g}" if kind == "a_priori" else title


def table3_layout(report, frame):
    """As the paper sets it: one block of rows per metric (ParaPLUIE again at 0), one column per corpus and the MBD."""
    records = []
    for row in frame.to_dict("records"):
        block = _table3_block(report, row["metric"], row["threshold_kind"])
        for key in TABLE3_MEASURES:
            ci = row.get(f"{key}_ci95")
            value = row[key]
            # An MBD interval that prints as [x, x] is no interval: every balanced draw held the same pairs.
            has_ci = ci is not None and ci == ci and number(value - ci) != number(value + ci)
            cell = interval(value, value - ci, value + ci) if has_ci else number(value)
            if key == "threshold":
                cell += _threshold_note(row)
            records.append({"corpus": row["corpus"], "row": (block, title_for(key)), "value": value, "cell": cell})
    long = pd.DataFrame(records)
    rows = list(dict.fromkeys(long["row"]))
    columns = corpus_order(report, long)
    cells = grid(long, "row", "corpus", "cell", rows_order=rows, columns_order=columns)
    values = grid(long, "row", "corpus", "value", rows_order=rows, columns_order=columns)
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


def table4_layout(report, frame):
    table = metrics_by_corpus(report, frame, frame["pearson_r"].map(number), sub="label")
    values = metrics_by_corpus(report, frame, frame["pearson_r"].abs(), sub="label")
    caption = (
        "Pearson's r; the edit distance is Levenshtein's, normalised by the longer sentence. "
        f"Bold: the weakest correlation (in absolute value) of each column. {PRECISION}"
    )
    return Shown(table, best_cells(values, axis=0, higher=False), caption)


def eer_layout(report, frame):
    long = frame.melt(id_vars=["metric", "corpus"], value_vars=["eer", "threshold"], var_name="measure")
    table = metrics_by_corpus(report, long, long["value"].map(number), sub="measure")
    values = metrics_by_corpus(report, long, long["value"], sub="measure")
    bold = best_cells(values, axis=0, higher=False) & (values.columns.get_level_values(1) == title_for("eer"))
    caption = (
        f"Each metric's EER beside the threshold where it is reached. Bold: the lowest EER of each column. {PRECISION}"
    )
    return Shown(table, bold, caption)


def _by_corpus(report, frame, row, cells, name):
    table = grid(frame.assign(cell=cells), row, "corpus", "cell", columns_order=corpus_order(report, frame))
    table.index = pd.Index([title_for(r) for r in table.index], name=name)
    table.columns = pd.Index([str(c) for c in table.columns])
    return table


def labels_layout(report, frame):
    cells = [f"{n} ({number(100 * s, 0)}%)" for n, s in zip(frame["n"], frame["share"])]
    table = _by_corpus(report, frame, "answer", cells, "Answer")
    return Shown(table, caption="Judgments per answer, and their share within the corpus (whole percent).")


def agreement_layout(report, frame):
    cells = [f"{number(v)} (n={n})" for v, n in zip(frame["value"], frame["n_pairs"])]
    table = _by_corpus(report, frame, "statistic", cells, "Statistic")
    return Shown(
        table, caption=f"Agreement on the pairs two or more judges answered; n: pairs (or judge pairs). {PRECISION}"
    )


def auc_layout(report, frame):
    cells = [interval(a, lo, hi) for a, lo, hi in zip(frame["auc"], frame["ci95_low"], frame["ci95_high"])]
    table = metrics_by_corpus(report, frame, cells)
    bold = best_cells(metrics_by_corpus(report, frame, frame["auc"]), axis=0)
    caption = f"Intervals in brackets. Bold: the highest AUC of each column. {PRECISION}"
    return Shown(table, bold, caption)


def rank_correlation_layout(report, frame):
    long = frame.melt(id_vars=["metric", "corpus"], value_vars=["spearman_rho", "kendall_tau"], var_name="measure")
    table = metrics_by_corpus(report, long, long["value"].map(number), sub="measure")
    bold = best_cells(metrics_by_corpus(report, long, long["value"], sub="measure"), axis=0)
    caption = f"Distances negated. Bold: the highest of each column. {PRECISION}"
    return Shown(table, bold, caption)


def oracle_layout(report, frame):
    """One row per figure: what it counts (label, verdict, checker, group), count / n and share."""
    of = [
        " · ".join(title_for(v) for v in values if v not in ("all", "")) or "Labelled pairs"
        for values in zip(frame["label"], frame["verdict"], frame["checker"], frame["group"])
    ]
    index = pd.MultiIndex.from_arrays(
        [metric_labels(report, frame["metric"]), frame["part"].map(ORACLE_PARTS), of], names=["Metric", "Part", "Of"]
    )
    table = pd.DataFrame(
        {
            "Count / n": [f"{c} / {n}" for c, n in zip(frame["count"], frame["n"])],
            "Share": [f"{number(100 * s, 0)}%" if n else "–" for s, n in zip(frame["share"], frame["n"])],
        },
        index=index,
    )
    caption = (
        "Shares in whole percent. The embedded SmolLM2-135M is a working pipeline, not a good judge (near chance)."
    )
    return Shown(table, caption=caption)


def systems_layout(report, frame):
    """Measures as rows, systems as columns: with every metric scored the table stays within the page."""
    systems = [str(s) for s in frame["system"]]
    rows, bold = {}, {}

    def add(name, cells, values=None, direction="higher"):
        if all(c == "–" for c in cells):
            return  # a measure this task type has not got (no paraphrase label on a criteria campaign)
        rows[name] = cells
        bold[name] = [False] * len(cells) if values is None else best_in_row(values, direction)

    add("Pairs", [str(n) for n in frame["n_pairs"]])
    add("Labelled", [str(n) if n else "–" for n in frame["n_labelled"]])
    rates = frame["paraphrase_rate"]
    add(
        "Paraphrase rate [95% CI]",
        [interval(r, lo, hi) for r, lo, hi in zip(rates, frame["ci_low"], frame["ci_high"])],
        rates,
    )
    add(title_for("mean_ordinal"), [number(v) for v in frame["mean_ordinal"]], frame["mean_ordinal"])
    if frame["mean_ordinal"].notna().any():  # without 5-way answers (criteria, spans) no one answered Don't know
        add(title_for("share_dont_know"), [number(v) for v in frame["share_dont_know"]])
    for metric in (m for m in report.metrics if m in frame.columns):
        direction = report.directions.get(metric)
        add(metric_title(metric, direction), [number(v) for v in frame[metric]], frame[metric], direction)
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


def system_pairwise_layout(report, frame):
    result = as_is(report, frame)
    p_values = frame[["p_sign", "p_bootstrap"]].astype(float).lt(0.05)
    bold = pd.DataFrame(False, index=result.table.index, columns=result.table.columns)
    for column in ("p_sign", "p_bootstrap"):
        bold[title_for(column)] = p_values[column].to_numpy()
    caption = (
        "Every two systems on the sources both have labelled pairs for: mean difference of their rates, "
        f"sources each one wins, and two-sided p-values. Bold: p below 0.05. {PRECISION}"
    )
    return Shown(result.table, bold, caption)


def system_correlation_layout(report, frame, against="paraphrase rate"):
    """Metrics as rows (and criteria, when the frame has them); Pearson, Spearman, Kendall with their intervals."""
    columns = {"Systems": [str(n) for n in frame["n_systems"]]}
    values = {}
    for name in ("pearson", "spearman", "kendall"):
        heading = f"{title_for(name)} [95% CI]"
        columns[heading] = [
            interval(v, lo, hi) for v, lo, hi in zip(frame[name], frame[f"{name}_ci_low"], frame[f"{name}_ci_high"])
        ]
        values[heading] = frame[name].to_numpy(float)
    index = pd.Index(metric_labels(report, frame["metric"]), name="Metric")
    if "criterion" in frame:
        criteria = [sentence_case(title_for(c)) for c in frame["criterion"]]
        index = pd.MultiIndex.from_arrays([index, criteria], names=["Metric", "Criterion"])
    table = pd.DataFrame(columns, index=index)
    bold = pd.DataFrame(False, index=index, columns=table.columns)
    for heading, column in values.items():
        bold[heading] = best_in_row(column, "higher")
    caption = (
        f"Each system's mean score (distances negated) against its {against}; 95% intervals over resampled "
        f"sources. Bold: the highest of each column. {PRECISION}"
    )
    return Shown(table, bold, caption)


def estimates_layout(report, frame):
    """The paraphrase rates: groups as rows, the labels-only and prediction-powered estimates side by side."""
    groups = [str(group) for group in frame["group"]]
    source = "gold label" if _label_source(report) == "gold" else "judges' majority"
    return estimates_shown(report, frame, groups, of="Paraphrase rate of", truth=f"rate (the {source}")


def _label_source(report) -> str:
    return getattr(getattr(report, "settings", None), "label_source", "human")


def labels_only_title(report) -> str:
    """The labels-only column, named by where the labels come from ("Gold" on gold labels)."""
    return "Gold" if _label_source(report) == "gold" else "Judges only"


def estimates_shown(report, frame, groups, *, of, truth):
    """Estimates (`ppi.estimates_table`) with their rows named `groups` under the heading `of`: the labels-only and
    the prediction-powered estimate side by side, and what the metric saved; `truth`: what each interval holds."""
    groups = [
        group + (" (difference)" if estimand.endswith("_difference") else "")
        for group, estimand in zip(groups, frame["estimand"])
    ]
    first = frame.iloc[0]
    active = first.get("design") == "active"
    labels_only = labels_only_title(report) + (" (Hájek)" if active else "")
    table = pd.DataFrame(
        {
            "Pairs": ["–" if missing(n) else str(int(n)) for n in frame["n_pairs"]],
            "Labelled": [str(int(n)) for n in frame["n_labelled"]],
            f"{labels_only} [95% CI]": [
                interval(v, lo, hi) for v, lo, hi in zip(frame["human"], frame["human_low"], frame["human_high"])
            ],
            "Prediction-powered [95% CI]": [
                interval(v, lo, hi) for v, lo, hi in zip(frame["ppi"], frame["ppi_low"], frame["ppi_high"])
            ],
            "Effective labelled pairs": [number(n, 0) for n in frame["n_effective"]],
        },
        index=pd.Index(groups, name=of),
    )
    predictor = metric_title(first["predictor"], report.directions.get(first["predictor"]))
    inputs = first.get("predictor_inputs") or predictor
    if first["chosen_by"] == "every pair labelled":
        chosen = "none needed, every pair has a label (both columns are the labels' own)"
    elif first["chosen_by"] == "researcher's choice":
        chosen = f"{inputs}, the researcher's choice"
    else:
        chosen = f"{inputs}, chosen on the labelled pairs by cross-fitting ({first['predictor_folds']} of the folds)"
    design = (
        "Pairs were drawn for judging by active choice: the labels-only estimate is Hájek's weighted mean, the "
        "prediction-powered one weights each labelled pair by one over its probability. "
        if active
        else ""
    )
    caption = (
        f"{estimates_conclusion(first, labels_only)} Each interval holds the true {truth} over every pair) in 95% "
        "of campaigns, whatever the metric's quality; a better metric narrows the prediction-powered "
        f"one. {design}Predictor: {chosen}. Effective labelled pairs: how many uniformly drawn labelled pairs a "
        f"classical interval would need to be as narrow as the prediction-powered one. {PRECISION}"
    )
    return Shown(table, caption=caption)


def estimates_conclusion(row, labels_only="Judges only") -> str:
    """What to conclude from the first row (all pairs), in words: how much narrower the interval is, what that is
    worth in judgments, whether the metric adds anything, and how many pairs the predictor has scored."""
    if row["chosen_by"] == "every pair labelled":
        return "Every pair has a label: there is nothing for a metric to add."
    scored = ""
    if not missing(row.get("n_scored")) and not missing(row.get("n_total")):
        scored = f" The predictor has scored {int(row['n_scored'])} of {int(row['n_total'])} pairs."
    if missing(row.get("ppi_low")) or missing(row.get("human_low")):
        return f"Too few labels for an interval yet.{scored}"
    human_width, ppi_width = row["human_high"] - row["human_low"], row["ppi_high"] - row["ppi_low"]
    narrower = 1 - ppi_width / human_width if human_width > 0 else 0.0
    gained = row["n_effective"] - row["n_labelled"]
    if row["lambda"] < 0.05 or (row.get("design") != "active" and abs(narrower) < 0.005):
        return (
            f"The metric adds nothing here (its weight lambda is {row['lambda']:.2f}): the prediction-powered "
            f"interval is the {labels_only.lower()} one's; {number(row['n_labelled'], 0)} labelled pairs count "
            f"as {number(row['n_effective'], 0)} uniformly drawn ones.{scored}"
        )
    worth = (
        f"worth {number(gained, 0)} more labelled pairs drawn uniformly"
        if gained >= 0
        else f"{number(-gained, 0)} labelled pairs fewer than a uniform draw would give"
    )
    return (
        f"The prediction-powered interval is {abs(narrower):.0%} {'narrower' if narrower >= 0 else 'wider'} than "
        f"the {labels_only.lower()} one: its {number(row['n_labelled'], 0)} labelled pairs count as "
        f"{number(row['n_effective'], 0)} uniformly drawn ones, {worth}.{scored}"
    )


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
            f"{labels_only_title(report)} [95% CI]": [
                interval(v, lo, hi) for v, lo, hi in zip(frame["human"], frame["human_low"], frame["human_high"])
            ],
            "Prediction-powered [95% CI]": [
                interval(v, lo, hi) for v, lo, hi in zip(frame["ppi"], frame["ppi_low"], frame["ppi_high"])
            ],
            "Interval": [str(kind) if isinstance(kind, str) else "–" for kind in frame.get("interval", [])],
        },
        index=index,
    )
    predictor = str(frame["predictor"].iloc[0] or "")
    named = metric_title(predictor, report.directions.get(predictor)) if predictor else "none (judges only)"
    caption = (
        "Judges got every selected candidate and a random share of the unselected ones, so each rate is "
        "unbiased for its whole group; a positive difference is what the filter gained. Interval: normal "
        "(judges only, and prediction-powered PPI++); normal, weighted (active choice drawn among the pairs "
        "sent: each judged pair weighted by one over its probability); Wilson (under 10 judged pairs, or one "
        "class only: Wilson's score interval from the judges' labels alone); Newcombe (a difference with "
        f"such a group: Newcombe's hybrid score interval). Predictor: {named}. {PRECISION}"
    )
    return Shown(table, caption=caption)


def rounds_layout(report, frame):
    """One row per round, its detector and its selection."""
    table = pd.DataFrame(
        {
            "Detector": frame["detector"].astype(str),
            "Trained on": [number(n, 0) for n in frame["detector_train_pairs"]],
            "Held-out span F1": [number(v, 3) for v in frame["detector_f1"]],
            "Candidates": [str(int(n)) for n in frame["candidates"]],
            "Selected": [
                f"{int(n)} ({number(100 * share, 1)}%)" for n, share in zip(frame["selected"], frame["selected_share"])
            ],
            "Sent to judges": [str(int(n)) for n in frame["sent"]],
            "Paraphrase rate of the selected (judged)": [
                f"{number(rate, 3)} ({int(n)})"
                for rate, n in zip(frame["paraphrase_rate_selected"], frame["judged_selected"])
            ],
        },
        index=pd.Index([str(int(n)) for n in frame["round"]], name="Round"),
    )
    return Shown(table, caption=f"Each round's detector was trained on every tagging before the round. {PRECISION}")
