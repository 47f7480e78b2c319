"""The analysis behind Parasol's reports: plain functions over pandas DataFrames, no Django.

`build_report(pairs, judgments, directions, label_source=...)` computes every table of the
paper's section 5 (and more); `figures` draws them. See README.md for the output columns.
"""

from reports.analysis.figures import curves_figure, figure2, reliability_figure, systems_figure
from reports.analysis.labels import GLOBAL, LABEL_SOURCES, attach_labels, human_labels
from reports.analysis.report import TABLE_NAMES, Direct, Report, Runner, Settings, build_report

__all__ = [
    "GLOBAL",
    "LABEL_SOURCES",
    "TABLE_NAMES",
    "Direct",
    "Report",
    "Runner",
    "Settings",
    "attach_labels",
    "build_report",
    "curves_figure",
    "figure2",
    "human_labels",
    "reliability_figure",
    "systems_figure",
]
