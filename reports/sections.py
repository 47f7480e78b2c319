"""The sections of a report page, in order, and what each needs from the data.

A section lists the tables it shows; `reason` answers, for a given report, why the section
has nothing to show (one line the page prints instead), or None when it has. Other report
sections (systems, criteria, spans...) join by appending a `Section` to `SECTIONS`.
"""

from collections.abc import Callable
from dataclasses import dataclass

from reports.analysis import TABLE_NAMES
from reports.analysis.present import TITLES, html

TABLE_TEMPLATE = "reports/_section.html"


def _no_pairs(report):
    return None if report.summary["n_pairs"] else "No pairs yet: import pairs into the campaign."


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


@dataclass(frozen=True)
class Section:
    slug: str  # the anchor of the section on the page (#report-<slug>)
    title: str
    tables: tuple[str, ...] = ()
    reason: Callable = _no_pairs  # report -> why there is nothing to show, or None
    template: str = TABLE_TEMPLATE


SECTIONS: list[Section] = [
    Section("corpora", "Corpora and labels", ("table2",)),
    Section("judges", "The judges' answers", ("labels", "by_english_level"), _no_judgments),
    Section("agreement", "Agreement between judges", ("agreement",), _no_shared_pairs),
    Section("scores", "Scores by label", ("table1", "table4"), _no_labelled_scores),
    Section("classification", "Metrics as classifiers", ("table3", "eer", "auc", "auc_tests"), _no_labelled_scores),
    Section("ranking", "Rank correlation with the labels", ("rank_correlation",), _no_ordinal_answers),
    Section("groups", "By generator, template and English level", ("by_group",), _no_groups),
    Section("oracle", "The LLM as an oracle", ("oracle",), _no_oracle),
    Section("figures", "Figures", (), _no_metrics, "reports/_figures.html"),
]


def sections_of(report, links=lambda name: {}) -> list[dict]:
    """The sections for a template: title, anchor, the reason it is empty or its tables' HTML.

    `links(name)` gives a table's download URLs (none in the one-file report).
    """
    result = []
    for section in SECTIONS:
        reason = section.reason(report)
        tables = [] if reason else [_table(report, name, links) for name in section.tables]
        result.append(
            {
                "slug": section.slug,
                "title": section.title,
                "template": section.template,
                "reason": reason,
                "tables": tables,
            }
        )
    return result


def _table(report, name, links):
    return {"name": name, "title": TITLES[name], "html": html(report, name), **links(name)}


def download_only() -> list[str]:
    """The tables no section shows: offered as downloads only."""
    shown = {name for section in SECTIONS for name in section.tables}
    return [name for name in TABLE_NAMES if name not in shown]


def tables_with_content(report) -> list[str]:
    """The tables worth exporting: those of sections with something to show, then download-only ones with rows."""
    names = [name for section in SECTIONS if not section.reason(report) for name in section.tables]
    extra = [name for name in download_only() if not name.startswith("curves_") and not report.tables[name].empty]
    return names + extra
