"""Metric scores per pair, and the pairs a metric could not score.

A score row is unique per (pair, metric, signature): re-running a task or a
crashed worker repairs rather than duplicates, and scores computed with
different settings (model, template, tokenisation) are never mixed.
"""

import sys

from django.conf import settings
from django.db import models

from campaigns.models import Pair


class Score(models.Model):
    pair = models.ForeignKey(Pair, related_name="scores", on_delete=models.CASCADE)
    metric = models.CharField(max_length=64)
    signature = models.CharField(max_length=500, help_text="Implementation version, model, template, tokenisation.")
    value = models.FloatField()
    # Per-pair evidence kept for inspection (an LLM oracle's raw answers); null for most metrics.
    details = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair", "metric"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "metric", "signature"], name="one_score_per_pair_metric_signature"),
            # Only finite scores, whoever writes them (metrics.base checks them first): NaN and
            # ±inf lie outside the finite floats on both databases (SQLite stores a NaN as NULL,
            # which the column refuses anyway); a non-finite score would print "inf" in table1.
            models.CheckConstraint(
                condition=models.Q(value__gte=-sys.float_info.max, value__lte=sys.float_info.max),
                name="score_value_finite",
            ),
        ]
        indexes = [
            # A metric's column of a campaign (its pairs' pk range) is read from this index alone,
            # never from the table: the report reads 400,000 scores a metric in a fraction of a second.
            models.Index(fields=["metric", "signature", "pair", "value"], name="score_column"),
            # Only the few scores that keep details: reading them never scans a metric's whole column.
            models.Index(
                fields=["metric", "signature"], condition=models.Q(details__isnull=False), name="score_details_kept"
            ),
        ]

    def __str__(self):
        return f"{self.pair} {self.metric}={self.value:.4f}"


def latest_scores(metric, pair_pks) -> dict:
    """{pair pk: value} of `metric` on these pairs under the newest signature among them (never mixed);
    registered with `campaigns.scores` for the apps that may not import this one."""
    scores = Score.objects.filter(pair_id__in=pair_pks, metric=metric)
    newest = scores.order_by("-created_at", "-pk").values_list("signature", flat=True).first()
    if newest is None:
        return {}
    return dict(scores.filter(signature=newest).values_list("pair_id", "value"))


class ScoreFailure(models.Model):
    """A pair a metric could not score under a signature: why (the server's message, cut), how often.

    Written by `scoring.service` when a metric hands a pair back as failed (`Metric.score_each`):
    the other pairs of its batch are stored. After PARASOL_SCORING_PAIR_TRIES tries the pair is
    given up: the sweep leaves it (`service.pairs_missing`) and the campaign's page says why.
    A later score of the pair removes its failure.
    """

    pair = models.ForeignKey(Pair, related_name="score_failures", on_delete=models.CASCADE)
    metric = models.CharField(max_length=64)
    signature = models.CharField(max_length=500)
    tries = models.PositiveIntegerField(default=1)
    reason = models.CharField(max_length=500)
    failed_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "metric", "signature"], name="one_failure_per_pair_metric_signature"
            )
        ]
        indexes = [models.Index(fields=["metric", "failed_at"], name="score_failure_recent")]

    @property
    def given_up(self):
        return self.tries >= settings.PARASOL_SCORING_PAIR_TRIES

    def __str__(self):
        return f"{self.pair} {self.metric} failed {self.tries}×: {self.reason[:60]}"
