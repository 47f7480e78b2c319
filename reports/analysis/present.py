"""The report's tables laid out as in the paper (corpora side by side as columns), for HTML.

The CSV files keep the tidy long form; these wide frames are for reading only.
"""

import numpy as np
import pandas as pd

from reports.analysis.common import ARROW

TITLES = {
    "table2": "Table 2 — corpus sizes and labels",
    "table1": "Table 1 — mean ± standard deviation of each metric, by label",
    "table3": (
        "Table 3 — best a-posteriori threshold (the strictest of tied ones; [lowest, highest] tied), "
        "ParaPLUIE at 0 (score ≥ 0 is a paraphrase) with its yes/no answer setting, and the Mixed Balanced Dataset"
    ),
    "table4": "Table 4 — Pearson correlation with the edit distance inside each class",
    "eer": "Equal error rate (non-paraphrases as spoofs)",
    "labels": "Answers given by the judges",
    "agreement": "Inter-annotator agreement",
    "auc": "ROC AUC with bootstrap 95% CI",
    "auc_tests": "Paired bootstrap tests of AUC differences",
    "rank_correlation": "Rank correlation with the labels (judges: mean 4-point answer; gold: the 0/1 label)",
    "by_english_level": "Judges by English level",
    "by_group": "Metrics by generator, template and judges' English level",
    "cohen": "Cohen's kappa of every two judges sharing enough pairs",
    "curves_threshold": "Accuracy, F1, recall and precision at every threshold",
    "curves_rank": "Accuracy, F1, recall and precision at every rank",
    "oracle": "LLM oracle (llm_vote, llm_checked): verdicts by label, checker acceptance, accuracy when accepted, "
    "self-consistency — the embedded SmolLM2-135M is a working pipeline, not a good judge (near chance)",
    "systems": "Systems: paraphrase rate [95% CI over sources], answers and metric means",
    "system_pairwise": "Systems compared pairwise on shared sources (sign test, paired bootstrap)",
    "system_correlation": "System-level correlation of each metric with the paraphrase rate",
}
# The Systems section of the page (shown when pairs name their system).
SYSTEM_TABLES = ["systems", "system_pairwise", "system_correlation"]
RATE_LABELS = {"threshold": "Threshold", "accuracy": "Acc.", "f1": "F1", "recall": "Recall", "precision": "Precision"}
SHOWN = [
    "table2",
    "table1",
    "table3",
    "table4",
    "eer",
    "labels",
    "agreement",
    "auc",
    "auc_tests",
    "rank_correlation",
    "by_english_level",
    "by_group",
    "oracle",
]
ORACLE_PARTS = {
    "verdict_by_label": "Verdict by label (Table 2)",
    "agreement": "Verdict = label",
    "accepted_by_label": "Accepted by the checker, by label (Table 3)",
    "accepted_by_verdict": "Accepted by the checker, by verdict",
    "accuracy_by_acceptance": "Verdict = label, accepted vs rejected",
    "consistency": "Self-consistency (pairs per value)",
}


def _number(value, digits=2):
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def _ordered(frame, column, order):
    known = [value for value in order if value in set(frame[column])]
    return known + [value for value in dict.fromkeys(frame[column]) if value not in known]


def _metric_name(report, metric):
    return f"{metric} {ARROW.get(report.directions.get(metric), '')}".strip()


def _corpus_columns(report, frame):
    """The corpora of `frame` in the report's order, then Global and MBD, then any other."""
    return _ordered(frame, "corpus", [*report.corpora, "Global", "MBD"])


def _metric_names(report, frame):
    return frame["metric"].map(lambda m: _metric_name(report, m))


def _rows_by_corpus(report, frame, row, cells):
    """One row per value of `row` (in order of appearance), one column per corpus."""
    table = frame.assign(cell=cells).pivot(index=row, columns="corpus", values="cell")
    return table.reindex(index=list(dict.fromkeys(frame[row])), columns=_corpus_columns(report, frame))


def _metrics_by_corpus_and_label(report, frame, cells):
    """One row per metric, two columns (paraphrase, non-paraphrase) per corpus."""
    frame = frame.assign(metric=_metric_names(report, frame), cell=cells)
    table = frame.pivot(index="metric", columns=["corpus", "label"], values="cell")
    columns = [(c, label) for c in _corpus_columns(report, frame) for label in ("paraphrase", "non_paraphrase")]
    return table.reindex(index=list(dict.fromkeys(frame["metric"])), columns=columns)


def _table1(report, frame):
    cells = [f"{_number(m)} ± {_number(s)}" if n else "–" for m, s, n in zip(frame["mean"], frame["std"], frame["n"])]
    return _metrics_by_corpus_and_label(report, frame, cells)


def _table2(report, frame):
    def count_and_share(kind):
        return [f"{n} : {_number(100 * s, 0)}%" for n, s in zip(frame[f"n_{kind}"], frame[f"share_{kind}"])]

    columns = {
        "Size": frame["size"].to_numpy(),
        "P.": count_and_share("paraphrase"),
        "Not P.": count_and_share("non_paraphrase"),
        "Unlabelled": frame["n_unlabelled"].to_numpy(),
        "Ties": frame["n_ties"].to_numpy(),
    }
    return pd.DataFrame(columns, index=pd.Index(frame["corpus"], name="corpus"))


def _threshold_note(row):
    """After Table 3's threshold: the tied range when several thresholds reach the best accuracy; at 0, the answer."""
    if row["threshold_kind"] == "a_priori":
        return f" (answer {row['answer']})" if row.get("answer") else ""
    low, high = row.get("threshold_low"), row.get("threshold_high")
    if low is None or low != low or low == high:
        return ""
    return f" [{_number(low)}, {_number(high)}]"


def _table3(report, frame):
    """Each metric's rates as rows; each corpus at its a-posteriori threshold and, as `corpus (0)`, at 0."""
    rows = []
    for row in frame.to_dict("records"):
        column = row["corpus"] if row["threshold_kind"] == "a_posteriori" else f"{row['corpus']} (0)"
        for key, label in RATE_LABELS.items():
            ci = row.get(f"{key}_ci95")
            cell = _number(row[key]) + (f" ± {_number(ci)}" if ci is not None and ci == ci else "")
            if key == "threshold":
                cell += _threshold_note(row)
            rows.append({"metric": _metric_name(report, row["metric"]), "row": label, "column": column, "cell": cell})
    cells = pd.DataFrame(rows)
    order = [*report.corpora, "Global", "MBD"]
    columns = [c for corpus in order for c in (corpus, f"{corpus} (0)") if c in set(cells["column"])]
    table = cells.pivot_table(index=["metric", "row"], columns="column", values="cell", aggfunc="first", sort=False)
    return table.reindex(columns=columns)


def _table4(report, frame):
    return _metrics_by_corpus_and_label(report, frame, frame["pearson_r"].map(_number))


def _eer(report, frame):
    long = frame.melt(id_vars=["metric", "corpus"], value_vars=["eer", "threshold"], var_name="row")
    long = long.assign(metric=_metric_names(report, long), cell=long["value"].map(_number))
    table = long.pivot_table(index=["metric", "row"], columns="corpus", values="cell", aggfunc="first", sort=False)
    return table.reindex(columns=_corpus_columns(report, frame))


def _labels(report, frame):
    cells = [f"{n} ({_number(100 * s, 0)}%)" for n, s in zip(frame["n"], frame["share"])]
    return _rows_by_corpus(report, frame, "answer", cells)


def _agreement(report, frame):
    cells = [f"{_number(v)} (n={n})" for v, n in zip(frame["value"], frame["n_pairs"])]
    return _rows_by_corpus(report, frame, "statistic", cells)


def _auc(report, frame):
    cells = [
        f"{_number(a)} [{_number(lo)}, {_number(hi)}]"
        for a, lo, hi in zip(frame["auc"], frame["ci95_low"], frame["ci95_high"])
    ]
    return _rows_by_corpus(report, frame.assign(metric=_metric_names(report, frame)), "metric", cells)


def _rank_correlation(report, frame):
    cells = [f"ρ {_number(r)} / τ {_number(t)}" for r, t in zip(frame["spearman_rho"], frame["kendall_tau"])]
    return _rows_by_corpus(report, frame.assign(metric=_metric_names(report, frame)), "metric", cells)


def _oracle(report, frame):
    """One row per figure: which verdicts it counts (label, verdict, checker, group), count / n and share."""
    of = [
        " · ".join(str(v) for v in values if v not in ("all", "")) or "labelled pairs"
        for values in zip(frame["label"], frame["verdict"], frame["checker"], frame["group"])
    ]
    table = pd.DataFrame(
        {
            "metric": frame["metric"],
            "part": frame["part"].map(ORACLE_PARTS),
            "of": of,
            "count / n": [f"{c} / {n}" for c, n in zip(frame["count"], frame["n"])],
            "share": [f"{_number(100 * s, 0)}%" if n else "–" for s, n in zip(frame["share"], frame["n"])],
        }
    )
    return table.set_index(["metric", "part", "of"])


def _as_is(report, frame):
    """Tables without a layout of their own: the tidy frame, floats rounded."""
    return frame.map(lambda v: _number(v, 3) if isinstance(v, float) else v)


FORMATTERS = {
    "table1": _table1,
    "table2": _table2,
    "table3": _table3,
    "table4": _table4,
    "eer": _eer,
    "labels": _labels,
    "agreement": _agreement,
    "auc": _auc,
    "rank_correlation": _rank_correlation,
    "oracle": _oracle,
}


def wide(report, name) -> pd.DataFrame:
    """The table `name` of `report` as a wide frame of formatted strings."""
    frame = report.tables[name]
    if frame.empty:
        return frame
    return FORMATTERS.get(name, _as_is)(report, frame)


def html(report, name) -> str:
    """The wide table as HTML; pandas escapes every cell."""
    table = wide(report, name)
    if table.empty:
        return '<p class="muted">Nothing to show yet.</p>'
    index = not isinstance(table.index, pd.RangeIndex)
    return table.to_html(classes="report-table", na_rep="–", border=0, index=index, escape=True)
