"""Why a table is not shown: no rows, nothing measured, every cell a dash, or too few systems (one line each)."""

import re

from reports.analysis.systems import MIN_SYSTEMS_FOR_CORRELATION

from .declared import shown
from .shown import Shown

DASHES = re.compile(r"[–\s\[\],]*")
EMPTY_REASONS = {
    "judge_competence": (
        "Each judge's competence comes with the crowd-aware labels: read the report with Dawid–Skene or MACE labels."
    ),
    "system_accuracy": "Fewer than two systems with labelled, scored pairs: there is no system pair to order.",
    "system_pairwise": "Fewer than two systems with labelled pairs: there is nothing to compare.",
    "system_correlation": (
        f"Fewer than {MIN_SYSTEMS_FOR_CORRELATION} systems with labelled pairs: a system-level correlation "
        f"needs at least {MIN_SYSTEMS_FOR_CORRELATION} systems to mean anything."
    ),
}


def empty_reason(report, name, laid_out: Shown | None = None) -> str | None:
    """Why table `name` is not shown (one line), or None: no rows, every cell a dash, or too few systems.

    `laid_out`: the table's `shown`, when the caller has it (laying out a table twice doubles a page's work).
    """
    frame = report.tables.get(name)
    # Any system-level correlation (the report's, PEM's per criterion) needs enough systems to mean anything.
    if frame is not None and len(frame) and {"n_systems", "meaningful"} <= set(frame.columns):
        if not frame["n_systems"].ge(MIN_SYSTEMS_FOR_CORRELATION).any():
            return EMPTY_REASONS["system_correlation"]
    if frame is not None and _no_measure(frame):
        return EMPTY_REASONS.get(name, NOTHING_MEASURED)
    result = None if frame is None or frame.empty else laid_out or shown(report, name)
    if result is None or all(DASHES.fullmatch(str(cell)) for cell in result.table.to_numpy().ravel()):
        return EMPTY_REASONS.get(name, "Nothing to show yet: every cell would be a dash.")
    return None


NOTHING_MEASURED = "Nothing measured yet: every figure of this table would be a dash (too few pairs or judges)."


def _no_measure(frame) -> bool:
    """Rows but no measure: every float column (the measures; counts are integers, names strings) is empty.

    Such a table prints its names and counts beside dashes only, as a span table with one judge does.
    """
    measures = frame.select_dtypes("floating")
    return len(frame) > 0 and measures.shape[1] > 0 and measures.isna().all().all()
