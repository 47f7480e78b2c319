"""The pairs a metric could not score (the scores themselves are facts about pairs: `campaigns.models.Score`)."""

from django.conf import settings
from django.db import models

from campaigns.models import Pair


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
