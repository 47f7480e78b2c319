"""The report of `similarity` campaigns: the metric-vs-label analysis of the paper (`reports.analysis.report`).

Its sections show the report's own tables; it reads nothing more from the database.
"""

from reports.analysis.present import tables_in

from .base import ESTIMATES, SYSTEMS, Section, TaskSection


def _no_judgments(report):
    if report.summary["n_judgments"]:
        return None
    return "No judgments yet: the judges' answers appear once judges have labelled pairs."


def _no_shared_pairs(report):
    reason = _no_judgments(report)
    if reason:
        return "No judgments yet: agreement appears once two judges share a pair."
    shared = report.tables["agreement"]
    if shared.empty or not (shared["n_pairs"] > 0).any():
        return "No two judges share a pair yet: agreement appears once two judges answer the same pair."
    return None


def _no_labelled_scores(report):
    if not report.metrics:
        return "No metric has scored these pairs yet: the comparison appears once the scoring workers have run."
    if report.summary["n_labelled"]:
        return None
    if report.settings.label_source == "gold":
        return "No pair has a gold label: import gold labels, or read the report against the judges' labels."
    return "No pair has a majority label yet: judges' labels appear once pairs are judged (ties give none)."


def _no_ordinal_answers(report):
    if not report.metrics:
        return _no_labelled_scores(report)
    ranked = report.tables["rank_correlation"]
    if ranked.empty or not ranked["n"].gt(0).any():
        return "No labelled pair to rank against yet: rank correlations appear once pairs have labels."
    return None


def _no_groups(report):
    if report.tables["by_group"].empty:
        return "Nothing to group by: the pairs carry no generator or template, and no judge's English level applies."
    return None


def _no_oracle(report):
    if report.tables.get("oracle") is None or report.tables["oracle"].empty:
        return "No LLM oracle verdicts: the LLM vote metrics run only when PARASOL_METRICS names them."
    return None


def _no_metrics(report):
    return None if report.metrics else "No metric has scored these pairs yet: figures appear once scores arrive."


# The sections before the Systems section and after it (`similarity+spans` puts its own between).
BEFORE_SYSTEMS = (
    Section("corpora", "Corpora and labels", tables_in("corpora"), notes=("labels",)),
    Section("judges", "The judges' answers", tables_in("judges"), _no_judgments),
    Section("agreement", "Agreement between judges", tables_in("agreement"), _no_shared_pairs, notes=("agreement",)),
    Section("scores", "Scores by label", tables_in("scores"), _no_labelled_scores, notes=("table4",)),
    Section(
        "classification", "Metrics as classifiers", tables_in("classification"), _no_labelled_scores, notes=("mbd",)
    ),
    Section(
        "ranking",
        "Rank correlation with the labels",
        tables_in("ranking"),
        _no_ordinal_answers,
        notes=("rank_correlation",),
    ),
    Section(
        "meta",
        "Which metric is better: significance clusters, the human ceiling, candidates of one source",
        tables_in("meta"),
        _no_labelled_scores,
        notes=("meta",),
    ),
    Section(
        "calibration",
        "Calibration: the metrics as probabilities",
        tables_in("calibration"),
        _no_labelled_scores,
        figures=("calibration",),  # its reliability diagram is drawn with the other figures
    ),
    Section("groups", "By generator, template and English level", tables_in("groups"), _no_groups, notes=("by_group",)),
)
AFTER_SYSTEMS = (
    Section("oracle", "The LLM as an oracle", tables_in("oracle"), _no_oracle),
    Section("figures", "Figures", (), _no_metrics, "reports/_figures.html", figures=("figure2", "thresholds", "ranks")),
)

SIMILARITY_REPORT = TaskSection(sections=(*BEFORE_SYSTEMS, SYSTEMS, ESTIMATES, *AFTER_SYSTEMS))
