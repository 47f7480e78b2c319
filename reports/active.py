"""Active choice: which pairs of a campaign judges will see, drawn once with known probabilities.

Each real pair is drawn independently with a probability that grows with the predictor metric's
uncertainty (`reports.analysis.ppi.active_probabilities`), so that `active_budget` pairs are drawn
in expectation. The probabilities are stored with the pairs, and copied to each assignment, so the
report's estimates can weight every judged pair by one over its probability (`ppi.active_mean`).

With generation's selection stage (`generation.selection`), the choice is drawn only among the candidates
the selection sends to judges: the ones it held back stay held back, and a sent candidate's probability
is the selection's chance times active choice's (the two draws are independent, so the weights multiply).
"""

import numpy as np
from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, Pair
from generation.selection import selection_design
from reports.analysis.common import orient
from reports.analysis.ppi import active_probabilities
from reports.frames import latest_metric_scores
from scoring.metrics.registry import METRICS


class ActiveChoiceError(ValueError):
    """Why the choice cannot be drawn now, in a sentence for the researcher."""


def draw_active_choice(campaign: Campaign, seed=None) -> dict:
    """Draw which pairs judges will see; refuse (ActiveChoiceError) unless the design can still be kept."""
    _check_can_draw(campaign)
    selection, undecided = selection_design(campaign)
    if undecided:
        raise ActiveChoiceError(
            f"{campaign.slug}: a generation run's selection has not yet decided {undecided} candidates; draw once "
            "it has (active choice draws among the candidates the selection sends to judges)."
        )
    real = list(campaign.real_pairs.order_by("pk").values_list("pk", flat=True))
    pairs = [pk for pk in real if selection.get(pk, (1.0, True))[1]]  # those a selection held back stay so
    scores = latest_metric_scores([campaign]).wide
    metric = campaign.ppi_predictor
    column = scores[metric].reindex(pairs) if metric in scores else None
    if column is None or column.isna().any():
        scored = 0 if column is None else int(column.notna().sum())
        raise ActiveChoiceError(
            f"{metric} has scored {scored} of {len(pairs)} pairs: draw once the workers have scored them all."
        )
    probability = active_probabilities(orient(column.to_numpy(), METRICS[metric].direction), campaign.active_budget)
    drawn = np.random.default_rng(seed).random(len(pairs)) < probability
    chance = np.array([selection.get(pk, (1.0, True))[0] for pk in pairs])
    _store(campaign, pairs, chance * probability, drawn)
    return {
        "pairs": len(pairs),
        "held_back": len(real) - len(pairs),
        "chosen": int(drawn.sum()),
        "expected": float(probability.sum()),
    }


def _check_can_draw(campaign):
    if not campaign.active_choice:
        raise ActiveChoiceError(f"{campaign.slug}: active choice is off; turn it on in the campaign's settings first.")
    if not campaign.ppi_predictor or campaign.ppi_predictor not in METRICS:
        raise ActiveChoiceError(f"{campaign.slug}: choose the predictor metric that guides active choice first.")
    if not campaign.active_budget:
        raise ActiveChoiceError(f"{campaign.slug}: set the budget (how many pairs to judge) first.")
    real_answers = campaign.judges.filter(judgments__is_training=False).exists()
    if real_answers:
        raise ActiveChoiceError(
            f"{campaign.slug}: judges have already answered real pairs; a choice drawn now would not be the one "
            "their pairs were judged under. Start a new campaign to use active choice."
        )


@transaction.atomic
def _store(campaign, pairs, probability, drawn):
    rows = [Pair(pk=pk, choice_probability=float(p), chosen=bool(d)) for pk, p, d in zip(pairs, probability, drawn)]
    Pair.objects.bulk_update(rows, ["choice_probability", "chosen"], batch_size=2000)
    # Reports cached per state of the campaign see the new design.
    Campaign.objects.filter(pk=campaign.pk).update(updated_at=timezone.now())
