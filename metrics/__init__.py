"""Paraphrase metrics: plain Python, no Django. See README.md for the metric cards.

>>> from metrics import get_metric
>>> get_metric("lev").score(sources=["a cat"], hypotheses=["a cat"])
[0.0]
"""

from metrics.base import HIGHER, LOWER, Metric, MetricUnavailable, format_signature
from metrics.registry import METRICS, get_metric, get_metric_class, metric_names

__all__ = [
    "HIGHER",
    "LOWER",
    "METRICS",
    "Metric",
    "MetricUnavailable",
    "format_signature",
    "get_metric",
    "get_metric_class",
    "metric_names",
]
