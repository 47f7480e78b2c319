"""What a task type's report shows: its page sections, in order, and the tables it reads from the database.

A `Section` is one part of the report page (its tables, or the one line saying why it has
nothing to show); a `TaskSection` is the whole report of one task type, named by the type's
`report_section` (`annotation.tasktypes.base.TaskType`).
"""

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from reports.analysis.common import computed_apart, failure_notes
from reports.analysis.present import Table, tables_in

TABLE_TEMPLATE = "reports/_section.html"


def no_pairs(report):
    return None if report.summary["n_pairs"] else "No pairs yet: import pairs into the campaign."


def no_systems(report):
    if report.tables["systems"].empty:
        return "No pair names its system: import pairs with a system column, or set the campaign's System keys."
    return None


@dataclass(frozen=True)
class Section:
    slug: str  # the anchor of the section on the page (#report-<slug>)
    title: str
    tables: tuple[str, ...] = ()
    reason: Callable = no_pairs  # report -> why there is nothing to show, or None
    template: str = TABLE_TEMPLATE
    # The analysis steps whose notes the page shows with this section (`Report.notes_by_step`): a
    # report shows a step's notes only when one of its sections shows what the step computed.
    notes: tuple[str, ...] = ()
    # The kinds of figure this section shows (`reports.figures.FigureSpec.kind`): a figure left out
    # for having nothing to draw is noted only by a report whose sections show its kind.
    figures: tuple[str, ...] = ()

    def with_tables(self, *tables) -> "Section":
        """This section showing `tables` instead (the Systems section shows each type's own measure)."""
        return dataclasses.replace(self, tables=tables)


def no_estimates(report):
    if not report.tables["estimates"].empty or not report.tables.get("criteria_estimates", pd.DataFrame()).empty:
        return None
    if not report.metrics:
        return "No metric has scored these pairs yet: the estimates need a metric's scores on every pair."
    return (
        "Too few labelled pairs of both classes for an interval yet: the estimates appear at 10 labelled pairs "
        "(a paraphrase label: the judges' answers, or the corpus's gold labels)."
    )


# The paraphrase rate from the judged pairs with and without the metric: every type shows it when it has labels.
ESTIMATES = Section(
    "estimates",
    "Fewer judgments: prediction-powered estimates",
    tables_in("estimates"),
    no_estimates,
    notes=("estimates",),
)


def no_labelled_scores(report):
    if not report.metrics:
        return "No metric has scored these pairs yet: the comparison appears once the scoring workers have run."
    if report.summary["n_labelled"]:
        return None
    if report.settings.label_source == "gold":
        return "No pair has a gold label: import gold labels, or read the report against the judges' labels."
    return "No pair has a majority label yet: judges' labels appear once pairs are judged (ties give none)."


def no_ranked_labels(report):
    if not report.metrics:
        return no_labelled_scores(report)
    ranked = report.tables["rank_correlation"]
    if ranked.empty or not ranked["n"].gt(0).any():
        return "No labelled pair to rank against yet: rank correlations appear once pairs have labels."
    return None


# The paper's metric-versus-label sections: any type whose answers give human labels (`TaskType.vote`) or
# whose pairs carry gold labels can show them.
LABEL_SECTIONS = (
    Section("scores", "Scores by label", tables_in("scores"), no_labelled_scores, notes=("table4",)),
    Section(
        "classification", "Metrics as classifiers", tables_in("classification"), no_labelled_scores, notes=("mbd",)
    ),
    Section(
        "ranking",
        "Rank correlation with the labels",
        tables_in("ranking"),
        no_ranked_labels,
        notes=("rank_correlation",),
    ),
    Section(
        "meta",
        "Which metric is better: significance clusters, the human ceiling, candidates of one source",
        tables_in("meta"),
        no_labelled_scores,
        notes=("meta",),
    ),
    Section(
        "calibration",
        "Calibration: the metrics as probabilities",
        tables_in("calibration"),
        no_labelled_scores,
        notes=("calibration",),
        figures=("calibration",),  # its reliability diagram is drawn with the other figures
    ),
)
SYSTEM_TABLES = tables_in("systems")
# Every task type's report compares the systems; each type swaps in the tables of its own measure.
SYSTEMS = Section(
    "systems", "Systems", SYSTEM_TABLES, no_systems, "reports/_systems.html", notes=("systems",), figures=("systems",)
)


@dataclass(frozen=True)
class TaskSection:
    """The report of one task type's campaigns."""

    # The page's sections, in order (each shows report tables, or tables this type adds).
    sections: tuple[Section, ...]
    # The tables `tables` adds, each declared once (`reports.analysis.present.Table`: name, title,
    # layout, section; the report's own are `present.TABLES`); each is offered as CSV and LaTeX.
    declared: tuple[Table, ...] = ()
    # campaigns -> {name: DataFrame}: the tables read from the database beside the report's
    # (those `declared`; one may replace a report table, as criteria's `system_correlation`).
    tables: Callable | None = None

    @property
    def headings(self) -> dict[str, str]:
        return {table.name: table.heading for table in self.declared}

    @property
    def note_steps(self) -> frozenset[str]:
        """The analysis steps whose notes this report shows: those its sections declare."""
        return frozenset(step for section in self.sections for step in section.notes)

    @property
    def figure_kinds(self) -> tuple[str, ...]:
        """The kinds of figure this report's sections show."""
        return tuple(kind for section in self.sections for kind in section.figures)

    def with_tables(self, report, campaigns):
        """`report` with the tables `tables` reads, and their declarations, added unless it has them already."""
        specs = {**report.specs, **{table.name: table for table in self.declared}}
        if self.tables is None or all(name in report.tables for name in self.headings):
            return report if specs == report.specs else dataclasses.replace(report, specs=specs)
        # Reading them may fail as a whole (each type's `tables` keeps its tables apart inside): then they alone go.
        added = computed_apart({tuple(self.headings): lambda: self.tables(campaigns)}, self.headings.get)
        notes = [note for note in failure_notes(added) if note not in report.notes]
        return dataclasses.replace(report, tables={**report.tables, **added}, specs=specs, notes=report.notes + notes)

    def tables_in(self, section: str) -> tuple[str, ...]:
        """The tables this type adds that a page section shows, in declared order."""
        return tuple(table.name for table in self.declared if table.section == section)
