"""The metric scores stored on a campaign's pairs, for the apps that may not import the scoring app.

Generation, annotation and scoring sit side by side on campaigns and never import one another, yet
generation's selection stage ranks candidates by the scores the scoring workers stored. Campaigns, at
the bottom, offers the question; the scoring app answers it (it registers its reader when Django
starts, `scoring.apps`), as `campaigns.signals` lets scoring listen without campaigns knowing it.
"""

from django.core.exceptions import ImproperlyConfigured

_readers = {}


def provide_latest_scores(reader):
    """Register `reader(metric, pair_pks) -> {pair pk: value}` (the scoring app does, once)."""
    _readers["latest"] = reader


def latest_scores(metric, pair_pks) -> dict:
    """{pair pk: value} of `metric` on these pairs, under the newest signature among them (never mixed)."""
    reader = _readers.get("latest")
    if reader is None:
        raise ImproperlyConfigured("No score reader registered: the scoring app is not in INSTALLED_APPS.")
    return reader(metric, pair_pks)
