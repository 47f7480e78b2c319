"""The sections of a report page, in order, and what each needs from the data.

A section lists the tables it shows; `reason` answers, for a given report, why the section
has nothing to show (one line the page prints instead), or None when it has; `task_types`
names the report sections of the task types (annotation/tasktypes/) it belongs to. A new
analysis joins by appending a `Section` to `SECTIONS`. Tables a task type computes from the
database (PEM's criteria, the span tagging) join the report's tables through `with_task_tables`.
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from annotation.tasktypes.registry import task_type_of
from reports.analysis import TABLE_NAMES
from reports.analysis.present import TITLES as REPORT_TITLES
from reports.analysis.present import empty_reason, is_wide, shown, table_html
from reports.analysis.systems import MIN_SYSTEMS_FOR_CORRELATION
from reports.criteria_section import TITLES as CRITERIA_TITLES
from reports.criteria_section import criteria_tables
from reports.figures import skipped_figures
from reports.spans import SPAN_SECTIONS, SPAN_TABLE_TITLES, span_tables

TABLE_TEMPLATE = "reports/_section.html"
TITLES = {**REPORT_TITLES, **CRITERIA_TITLES, **SPAN_TABLE_TITLES}
# The report sections (of annotation/tasktypes/) that show the metric-vs-label analysis.
SIMILARITY = ("similarity", "similarity+spans")
CRITERIA = ("criteria",)
SPANS = SPAN_SECTIONS
EVERY_TASK = (*SIMILARITY, *CRITERIA, *SPANS)
SYSTEM_TABLES = ("systems", "system_pairwise", "system_correlation")
# The by-system tables of criteria and spans are shown in the Systems section.
CRITERIA_SECTION = tuple(name for name in CRITERIA_TITLES if name != "criteria_by_system")
SPANS_SECTION = tuple(name for name in SPAN_TABLE_TITLES if name != "span_degree_by_system")
# Notes of the similarity analysis that say nothing about a campaign without 5-way answers.
SIMILARITY_NOTE_WORDS = ("4-point scale", "human label", "majority label", "breakdown by", "rank correlations")


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


def _no_systems(report):
    if report.tables["systems"].empty:
        return "No pair names its system: import pairs with a system column, or set the campaign's System keys."
    return None


def _no_ratings(report):
    ratings = report.tables.get("criteria_by_system")
    if ratings is None or ratings.empty:
        return "No ratings yet: PEM's tables appear once judges have rated pairs on the criteria."
    return None


def _no_taggings(report):
    if all(report.tables.get(name) is None or report.tables[name].empty for name in SPAN_TABLE_TITLES):
        return "No taggings yet: span agreement appears once judges have tagged pairs (or pairs come pre-tagged)."
    return None


@dataclass(frozen=True)
class Section:
    slug: str  # the anchor of the section on the page (#report-<slug>)
    title: str
    tables: tuple[str, ...] = ()
    reason: Callable = _no_pairs  # report -> why there is nothing to show, or None
    template: str = TABLE_TEMPLATE
    task_types: tuple[str, ...] = SIMILARITY
    # Tables in place of `tables` for some task types: each section shows its task type's measure.
    tables_of_task: dict = dataclasses.field(default_factory=dict)

    def tables_for(self, task) -> tuple[str, ...]:
        return self.tables_of_task.get(task, self.tables)


SECTIONS: list[Section] = [
    Section("corpora", "Corpora and labels", ("table2",)),
    Section("judges", "The judges' answers", ("labels", "by_english_level"), _no_judgments),
    Section("agreement", "Agreement between judges", ("agreement",), _no_shared_pairs),
    Section("scores", "Scores by label", ("table1", "table4"), _no_labelled_scores),
    Section("classification", "Metrics as classifiers", ("table3", "eer", "auc", "auc_tests"), _no_labelled_scores),
    Section("ranking", "Rank correlation with the labels", ("rank_correlation",), _no_ordinal_answers),
    Section("groups", "By generator, template and English level", ("by_group",), _no_groups),
    Section("criteria", "PEM's criteria: judges and metrics", CRITERIA_SECTION, _no_ratings, task_types=CRITERIA),
    Section("spans", "Span tagging and degree of paraphrase", SPANS_SECTION, _no_taggings, task_types=SPANS),
    Section(
        "systems",
        "Systems",
        SYSTEM_TABLES,
        _no_systems,
        "reports/_systems.html",
        EVERY_TASK,
        {
            # Criteria campaigns have no paraphrase label: their systems are compared on the criteria.
            "criteria": ("criteria_by_system", "systems"),
            "spans": ("span_degree_by_system", "systems"),
            "similarity+spans": (*SYSTEM_TABLES, "span_degree_by_system"),
        },
    ),
    Section("oracle", "The LLM as an oracle", ("oracle",), _no_oracle),
    Section("figures", "Figures", (), _no_metrics, "reports/_figures.html"),
]


def task_of(campaigns) -> str:
    """The report section name of the campaigns' task type (campaigns compared in one report share it)."""
    return task_type_of(campaigns[0]).report_section.name


def with_task_tables(report, campaigns):
    """`report` with the tables its task type reads from the database (PEM's criteria, the span tagging) added."""
    task = task_of(campaigns)
    extra = {}
    if task == "criteria" and "criteria_by_system" not in report.tables:
        extra |= criteria_tables(campaigns)
    if task in SPAN_SECTIONS and "span_agreement" not in report.tables:
        extra |= span_tables(campaigns)
    return dataclasses.replace(report, tables={**report.tables, **extra}) if extra else report


def systems_summary(report) -> dict:
    """How many systems the pairs name, and whether that is enough for system-level correlations to mean anything."""
    n = len(report.tables["systems"])
    return {"n": n, "meaningful": n >= MIN_SYSTEMS_FOR_CORRELATION, "minimum": MIN_SYSTEMS_FOR_CORRELATION}


def sections_for(task) -> list[Section]:
    return [section for section in SECTIONS if task in section.task_types]


def sections_of(report, links=lambda name: {}, *, task="similarity") -> list[dict]:
    """The sections of `task`'s report for a template: title, anchor, the reason it is empty or its tables' HTML.

    `links(name)` gives a table's download URLs (none in the one-file report).
    """
    result = []
    for section in sections_for(task):
        reason = section.reason(report)
        tables = [] if reason else [_table(report, name, links) for name in section.tables_for(task)]
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
    """A table for the page: its title, and its HTML and downloads, or the one line saying why it is not shown."""
    reason = empty_reason(report, name)
    if reason:
        return {"name": name, "title": TITLES[name], "reason": reason}
    result = shown(report, name)
    return {"name": name, "title": TITLES[name], "html": table_html(result), "wide": is_wide(result), **links(name)}


def notes_for(report, task) -> list[str]:
    """The notes a page of `task` shows: a criteria or span campaign has no 5-way answer to note about, nor
    Figure 2 and the curves; figures left out for having nothing to draw are named."""
    if task in SIMILARITY:
        return report.notes + skipped_figures(report)
    notes = [note for note in report.notes if not any(word in note for word in SIMILARITY_NOTE_WORDS)]
    return notes + skipped_figures(report, kinds=("systems",))


def download_only() -> list[str]:
    """The tables no section shows: offered as downloads only."""
    shown = {name for section in SECTIONS for name in section.tables}
    shown |= {name for section in SECTIONS for names in section.tables_of_task.values() for name in names}
    return [name for name in TABLE_NAMES if name not in shown]


def tables_with_content(report, task="similarity") -> list[str]:
    """The tables worth exporting: those of sections with something to show, then download-only ones with rows."""
    names = [
        name
        for section in sections_for(task)
        if not section.reason(report)
        for name in section.tables_for(task)
        if name in report.tables and not empty_reason(report, name)
    ]
    extra = [name for name in download_only() if not name.startswith("curves_") and not report.tables[name].empty]
    return names + extra
