"""How one value of a report table reads: numbers to the stated precision, intervals, names in the reader's words.

Every internal name goes through `reports.analysis.vocabulary` (`title_for`, `metric_title`).
"""

import numpy as np
import pandas as pd

from metrics.registry import METRICS
from reports.analysis.vocabulary import VALUE_TITLES, metric_title, title_for

DIGITS = 2
PRECISION = "Numbers to two decimals."


def missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float | np.floating) and np.isnan(value))


def number(value, digits=DIGITS):
    return "–" if missing(value) else f"{value:.{digits}f}"


def interval(value, low, high):
    """A value and its 95% interval, as "0.73 [0.71, 0.74]"."""
    if low is None or high is None or low != low or high != high:
        return number(value)
    return f"{number(value)} [{number(low)}, {number(high)}]"


def sentence_case(text):
    return text[:1].upper() + text[1:]


NAMED_VALUES = ("answer", "statistic", "group_by", "label", "english_level", "criterion", "row")
METRIC_VALUES = ("metric", "metric_a", "metric_b")


# "all" rows of the span tables: every judge, corpus or system together.
ALL_OF = {"judge": "All judges", "corpus": "All corpora", "system": "All systems"}


def metric_labels(report, metrics):
    return [metric_title(m, report.directions.get(m)) for m in metrics]


def name_in_words(report, column, value):
    """A name in a table cell in the reader's words: a metric's printed name, a label, or the value as given."""
    if column in ALL_OF and value == "all":
        return ALL_OF[column]
    if column in METRIC_VALUES or (column == "against" and value in METRICS):
        return metric_title(value, report.directions.get(value))
    if column == "metrics":  # PEM's fit: the metrics it was given, comma-separated
        names = [name.strip() for name in str(value).split(",") if name.strip()]
        return ", ".join(metric_title(name) for name in names) or "–"
    if column in (*NAMED_VALUES, "against"):
        return sentence_case(title_for(value))
    return str(value)


def cell_in_words(report, column, value):
    """Any value as the page prints it: numbers to the stated precision, Yes/No, a dash for nothing."""
    if isinstance(value, bool | np.bool_):
        return VALUE_TITLES[bool(value)]
    if missing(value):
        return VALUE_TITLES[None]
    if isinstance(value, float | np.floating):
        return number(value)
    if isinstance(value, int | np.integer):
        return str(value)
    return name_in_words(report, column, value)
