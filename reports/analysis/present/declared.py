"""The report's tables, each declared once (`Table`: name, title, the step computing it, layout, page section).

A task type's report declares the tables it adds the same way (`reports.task_sections`); `spec_of`
finds any table's declaration and `shown` lays the table out by it.
"""

from collections.abc import Callable
from dataclasses import dataclass

from reports.analysis.vocabulary import title_for

from .layouts import (
    agreement_layout,
    auc_layout,
    eer_layout,
    estimates_layout,
    labels_layout,
    oracle_layout,
    rank_correlation_layout,
    rounds_layout,
    selection_layout,
    system_correlation_layout,
    system_pairwise_layout,
    systems_layout,
    table1_layout,
    table2_layout,
    table3_layout,
    table4_layout,
)
from .meta import (
    calibration_layout,
    human_ceiling_layout,
    judge_competence_layout,
    metric_clusters_layout,
    metric_tests_layout,
    system_accuracy_layout,
    within_source_layout,
)
from .shown import Shown, as_is


@dataclass(frozen=True)
class Table:
    """A report table, declared once: its file name, title, the step computing it, its layout, its page section."""

    name: str  # the CSV's and the download's name
    title: str  # what it shows, without a number: LaTeX numbers its tables itself
    build: str = ""  # the step group of `report._Steps` computing it; "" for a table a task type reads itself
    layout: Callable | None = None  # (report, frame) -> Shown or frame, as the page and LaTeX print it; None: as is
    section: str | None = None  # the slug of the page `Section` showing it (any type's); None: a download only
    paper: str = ""  # the ParaPLUIE paper's table it reproduces ("Table 3"), if any
    # (column, the reader's words) for columns the vocabulary does not name: a task type's own; the CSV keeps names.
    column_titles: tuple[tuple[str, str], ...] = ()

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
        table1_layout,
        "scores",
        paper="Table 1",
    ),
    Table("table2", "Corpus sizes and labels", "judges", table2_layout, "corpora", paper="Table 2"),
    Table(
        "table3",
        "Accuracy, F1, recall and precision at each metric's best a-posteriori threshold, and the MBD",
        "classification",
        table3_layout,
        "classification",
        paper="Table 3",
    ),
    Table(
        "table4",
        "Pearson correlation with the edit distance inside each class",
        "classification",
        table4_layout,
        "scores",
        paper="Table 4",
    ),
    Table("eer", "Equal error rate (non-paraphrases as spoofs)", "classification", eer_layout, "classification"),
    Table("labels", "Answers given by the judges", "judges", labels_layout, "judges"),
    Table("agreement", "Inter-annotator agreement", "judges", agreement_layout, "agreement"),
    Table("cohen", "Cohen's kappa of every two judges sharing enough pairs", "judges"),
    Table("auc", "ROC AUC with bootstrap 95% CI", "auc", auc_layout, "classification"),
    # Every two metrics' tests (hundreds of rows with a full panel of metrics): a download; the page shows what
    # they conclude, the significance clusters.
    Table("auc_tests", "Paired bootstrap tests of AUC differences", "auc"),
    Table(
        "rank_correlation",
        "Rank correlation with the labels (judges: mean 4-point answer; gold: the 0/1 label)",
        "rankings",
        rank_correlation_layout,
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
        oracle_layout,
        "oracle",
    ),
    Table(
        "systems",
        "Systems side by side",
        "systems",
        systems_layout,
        "systems",
    ),
    Table(
        "system_pairwise",
        "Systems compared pairwise on shared sources (sign test, paired bootstrap)",
        "systems",
        system_pairwise_layout,
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
        system_correlation_layout,
        "systems",
    ),
    # The meta-evaluation (`meta`; docs/analysis/meta-evaluation.md), each caption naming its paper.
    Table(
        "system_accuracy",
        "Systems ordered as the judges order them",
        "meta",
        system_accuracy_layout,
        "systems",
    ),
    Table(
        "metric_clusters",
        "Significance clusters of the metrics (WMT; Deutsch et al. 2021)",
        "meta",
        metric_clusters_layout,
        "meta",
    ),
    Table("metric_tests", "Tests of the metrics' differences", "meta", metric_tests_layout),  # a download, as auc_tests
    Table(
        "within_source",
        "Ranking inside each source's group",
        "meta",
        within_source_layout,
        "meta",
    ),
    Table(
        "human_ceiling",
        "How far one more judge gets",
        "meta",
        human_ceiling_layout,
        "meta",
    ),
    Table(
        "calibration",
        "The metrics as probabilities",
        "calibration",
        calibration_layout,
        "calibration",
    ),
    Table(
        "reliability",
        "Reliability diagram data: predicted probability against observed share, per bin",
        "calibration",
    ),
    Table(
        "judge_competence",
        "Judges weighed by a model of their care",
        "meta",
        judge_competence_layout,
        "agreement",
    ),
)


SPECS = {table.name: table for table in TABLES}


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
    spec = spec_of(report, name)
    result = (spec.layout or as_is)(report, frame.rename(columns=dict(spec.column_titles)))
    return result if isinstance(result, Shown) else Shown(result)
