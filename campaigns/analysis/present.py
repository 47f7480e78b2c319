"""The report's tables laid out as in the paper (corpora side by side as columns), for HTML.

The CSV files keep the tidy long form; these wide frames are for reading only.
"""

import numpy as np
import pandas as pd

from campaigns.analysis.common import ARROW

TITLES = {
    "table2": "Table 2 — corpus sizes and labels",
    "table1": "Table 1 — mean ± standard deviation of each metric, by label",
    "table3": "Table 3 — best a-posteriori threshold (and ParaPLUIE at 0), with the Mixed Balanced Dataset",
    "table4": "Table 4 — Pearson correlation with the edit distance inside each class",
    "eer": "Equal error rate (non-paraphrases as spoofs)",
    "labels": "Answers given by the judges",
    "agreement": "Inter-annotator agreement",
    "auc": "ROC AUC with bootstrap 95% CI",
    "auc_tests": "Paired bootstrap tests of AUC differences",
    "rank_correlation": "Rank correlation with the judges' 4-point answers (pair means)",
    "by_english_level": "Judges by English level",
    "by_group": "Metrics by generator, template and judges' English level",
    "cohen": "Cohen's kappa of every two judges sharing enough pairs",
    "curves_threshold": "Accuracy, F1, recall and precision at every threshold",
    "curves_rank": "Accuracy, F1, recall and precision at every rank",
    "oracle": "LLM oracle: verdicts by label, checker acceptance, accuracy when accepted, self-consistency",
}
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


def _number(value, digits=2):
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def _ordered(frame, column, order):
    known = [value for value in order if value in set(frame[column])]
    return known + [value for value in dict.fromkeys(frame[column]) if value not in known]


def _metric_name(report, metric):
    return f"{metric} {ARROW.get(report.directions.get(metric), '')}".strip()


def wide(report, name) -> pd.DataFrame:
    """The table `name` of `report` as a wide frame of formatted strings."""
    frame = report.tables[name]
    if frame.empty:
        return frame
    corpus_order = [*report.corpora, "Global", "MBD"]
    if name == "table1":
        cells = frame.assign(
            metric=frame["metric"].map(lambda m: _metric_name(report, m)),
            cell=[
                f"{_number(m)} ± {_number(s)}" if n else "–" for m, s, n in zip(frame["mean"], frame["std"], frame["n"])
            ],
        )
        table = cells.pivot(index="metric", columns=["corpus", "label"], values="cell")
        return table.reindex(
            index=[_metric_name(report, m) for m in dict.fromkeys(frame["metric"])],
            columns=[
                (c, lab) for c in _ordered(frame, "corpus", corpus_order) for lab in ("paraphrase", "non_paraphrase")
            ],
        )
    if name == "table2":
        return pd.DataFrame(
            {
                "Size": frame["size"].to_numpy(),
                "P.": [
                    f"{n} : {_number(100 * s, 0)}%" for n, s in zip(frame["n_paraphrase"], frame["share_paraphrase"])
                ],
                "Not P.": [
                    f"{n} : {_number(100 * s, 0)}%"
                    for n, s in zip(frame["n_non_paraphrase"], frame["share_non_paraphrase"])
                ],
                "Unlabelled": frame["n_unlabelled"].to_numpy(),
                "Ties": frame["n_ties"].to_numpy(),
            },
            index=pd.Index(frame["corpus"], name="corpus"),
        )
    if name == "table3":
        rows = []
        for row in frame.to_dict("records"):
            for key, label in RATE_LABELS.items():
                ci = row.get(f"{key}_ci95")
                cell = _number(row[key]) + (f" ± {_number(ci)}" if ci is not None and ci == ci else "")
                column = row["corpus"] if row["threshold_kind"] == "a_posteriori" else f"{row['corpus']} (0)"
                rows.append(
                    {"metric": _metric_name(report, row["metric"]), "row": label, "column": column, "cell": cell}
                )
        cells = pd.DataFrame(rows)
        columns = [c for corpus in corpus_order for c in (corpus, f"{corpus} (0)") if c in set(cells["column"])]
        table = cells.pivot_table(index=["metric", "row"], columns="column", values="cell", aggfunc="first", sort=False)
        return table.reindex(columns=columns)
    if name == "table4":
        cells = frame.assign(
            metric=frame["metric"].map(lambda m: _metric_name(report, m)), cell=frame["pearson_r"].map(_number)
        )
        table = cells.pivot(index="metric", columns=["corpus", "label"], values="cell")
        return table.reindex(
            index=list(dict.fromkeys(cells["metric"])),
            columns=[
                (c, lab) for c in _ordered(frame, "corpus", corpus_order) for lab in ("paraphrase", "non_paraphrase")
            ],
        )
    if name == "eer":
        long = frame.melt(id_vars=["metric", "corpus"], value_vars=["eer", "threshold"], var_name="row")
        long["metric"] = long["metric"].map(lambda m: _metric_name(report, m))
        long["cell"] = long["value"].map(_number)
        table = long.pivot_table(index=["metric", "row"], columns="corpus", values="cell", aggfunc="first", sort=False)
        return table.reindex(columns=_ordered(frame, "corpus", corpus_order))
    if name == "labels":
        cells = frame.assign(cell=[f"{n} ({_number(100 * s, 0)}%)" for n, s in zip(frame["n"], frame["share"])])
        table = cells.pivot(index="answer", columns="corpus", values="cell")
        return table.reindex(
            index=list(dict.fromkeys(frame["answer"])), columns=_ordered(frame, "corpus", corpus_order)
        )
    if name == "agreement":
        cells = frame.assign(cell=[f"{_number(v)} (n={n})" for v, n in zip(frame["value"], frame["n_pairs"])])
        table = cells.pivot(index="statistic", columns="corpus", values="cell")
        return table.reindex(
            index=list(dict.fromkeys(frame["statistic"])), columns=_ordered(frame, "corpus", corpus_order)
        )
    if name == "auc":
        cells = frame.assign(
            metric=frame["metric"].map(lambda m: _metric_name(report, m)),
            cell=[
                f"{_number(a)} [{_number(lo)}, {_number(hi)}]"
                for a, lo, hi in zip(frame["auc"], frame["ci95_low"], frame["ci95_high"])
            ],
        )
        table = cells.pivot(index="metric", columns="corpus", values="cell")
        return table.reindex(
            index=list(dict.fromkeys(cells["metric"])), columns=_ordered(frame, "corpus", corpus_order)
        )
    if name == "rank_correlation":
        cells = frame.assign(
            metric=frame["metric"].map(lambda m: _metric_name(report, m)),
            cell=[f"ρ {_number(r)} / τ {_number(t)}" for r, t in zip(frame["spearman_rho"], frame["kendall_tau"])],
        )
        table = cells.pivot(index="metric", columns="corpus", values="cell")
        return table.reindex(
            index=list(dict.fromkeys(cells["metric"])), columns=_ordered(frame, "corpus", corpus_order)
        )
    return frame.map(lambda v: _number(v, 3) if isinstance(v, float) else v)


def html(report, name) -> str:
    """The wide table as HTML; pandas escapes every cell."""
    table = wide(report, name)
    if table.empty:
        return '<p class="muted">Nothing to show yet.</p>'
    index = not isinstance(table.index, pd.RangeIndex)
    return table.to_html(classes="report-table", na_rep="–", border=0, index=index, escape=True)
