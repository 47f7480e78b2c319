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
    "load_libraries",
    "reliability_figure",
    "systems_figure",
]


def load_libraries():
    """Import now what the analysis imports on first use (`ppi_py` with numba and statsmodels, scipy.stats,
    crowd-kit, matplotlib): seconds that a process computing reports pays once, at its start, instead of
    during the first report a researcher waits for. A report worker calls it as it starts (reports/apps.py)."""
    import crowdkit.aggregation  # noqa: F401
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import statsmodels.stats.proportion  # noqa: F401

    from reports.analysis.common import scipy_stats
    from reports.analysis.ppi import ppi_library

    ppi_library()
    scipy_stats()
