"""Active choice: which pairs of a campaign judges will see, drawn in waves with known probabilities.

Zrnic and Candès (2024), with the robust rule of Li, Zrnic and Candès (2025). The campaign's pairs are split
into `ppi.WAVES` blocks, each a uniform random share of them taken when its wave is drawn, sized so that each wave
spends an equal share of what is left of the budget. The first wave draws each pair of its block with the
uniform chance; every later one fits a calibrated model to the labels so far (every metric's scores, cross-fitted:
`ppi.cross_fitted`) and draws each pair of its block with a probability that grows with the model's uncertainty,
mixed with the uniform chance by the robust rule (`ppi.robust_probabilities`). Each pair's probability, whether
it was drawn and its wave are stored with it (and each assignment keeps the probability), so the report's
estimates weight every judged pair by one over its probability (`ppi.active_mean`), its wave's non-response
included (`ppi.active_design`).

With generation's selection stage (`generation.selection`), only the candidates the selection sends to judges
are drawn: the ones it held back stay held back (they still fall into the waves' blocks, undrawn), and a sent
candidate's probability is the selection's chance times active choice's (independent draws: the weights multiply).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.db import transaction
from django.utils import timezone

from campaigns.models import Campaign, Pair
from generation.selection import selection_design
from metrics.registry import METRICS
from reports.analysis import ppi
from reports.analysis.common import orient
from reports.analysis.labels import attach_labels
from reports.frames import load_frames


class ActiveChoiceError(ValueError):
    """Why the choice cannot be drawn now, in a sentence for the researcher."""


@dataclass(frozen=True)
class ActiveState:
    """Where a campaign's active choice stands, for its page."""

    waves_drawn: int
    waves: int
    pairs: int  # real pairs
    in_waves: int  # pairs in the blocks of the waves drawn so far
    drawn: int  # pairs drawn for judging
    labelled: int  # drawn pairs with at least one counted judgment
    budget: int
    scored: int  # pairs the predictor metric has scored
    blocker: str  # why the next wave cannot be drawn now ("" when it can, or when every wave is drawn)

    @property
    def finished(self):
        return self.waves_drawn >= self.waves

    @property
    def waiting(self):
        return self.waves_drawn == 0


def active_state(campaign: Campaign) -> ActiveState:
    real = campaign.real_pairs
    in_waves = real.filter(choice_wave__isnull=False)
    drawn = in_waves.filter(chosen=True)
    waves = int(in_waves.order_by("-choice_wave").values_list("choice_wave", flat=True).first() or 0)
    metric = campaign.ppi_predictor
    scored = real.filter(scores__metric=metric).values("pk").distinct().count() if metric else 0
    try:
        _check_can_draw(campaign, waves)
        blocker = ""
    except ActiveChoiceError as error:
        blocker = str(error)
    return ActiveState(
        waves_drawn=waves,
        waves=ppi.WAVES,
        pairs=real.count(),
        in_waves=in_waves.count(),
        drawn=drawn.count(),
        labelled=drawn.filter(judgments__isnull=False, judgments__is_training=False).values("pk").distinct().count(),
        budget=campaign.active_budget or 0,
        scored=scored,
        blocker=blocker,
    )


def draw_active_choice(campaign: Campaign, seed=None) -> dict:
    """Draw the next wave of pairs judges will see; refuse (ActiveChoiceError) unless the design can be kept."""
    waves_drawn = _waves_drawn(campaign)
    _check_can_draw(campaign, waves_drawn)
    selection, undecided = selection_design(campaign)
    if undecided:
        raise ActiveChoiceError(
            f"{campaign.slug}: a generation run's selection has not yet decided {undecided} candidates; draw once "
            "it has (active choice draws among the candidates the selection sends to judges)."
        )
    rng = np.random.default_rng(seed)
    real = list(campaign.real_pairs.order_by("pk").values_list("pk", "choice_wave", "chosen", "choice_probability"))
    remaining = [pk for pk, wave, _c, _p in real if wave is None]
    spent = sum(1 for _pk, wave, chosen, _p in real if wave is not None and chosen)
    wave = waves_drawn + 1
    size, wave_budget = ppi.wave_plan(len(remaining), campaign.active_budget - spent, wave)
    block = np.sort(rng.choice(remaining, size, replace=False))
    sent = np.array([selection.get(pk, (1.0, True))[1] for pk in block], dtype=bool)
    chance = np.array([selection.get(pk, (1.0, True))[0] for pk in block])
    if wave == 1:
        probability = np.full(sent.sum(), min(1.0, wave_budget / max(sent.sum(), 1)))
        rho = 1.0
    else:
        probability, rho = _guided(campaign, block[sent], wave_budget)
    drawn = rng.random(len(probability)) < probability
    _store(campaign, wave, block, sent, chance, probability, drawn)
    return {
        "wave": wave,
        "waves": ppi.WAVES,
        "pairs": int(sent.sum()),
        "held_back": int((~sent).sum()),
        "chosen": int(drawn.sum()),
        "expected": float(probability.sum()),
        "uniform_share": rho,
    }


def _guided(campaign, block, budget):
    """A later wave's probabilities over `block` (pks): a model of the labels so far, from every metric that has
    scored every pair of the campaign, its uncertainty mixed with the uniform chance by the robust rule."""
    frames = load_frames([campaign], hypotheses=False)
    pairs, _notes = attach_labels(frames.pairs, frames.judgments, "human")
    pair_id_of_pk = dict(campaign.real_pairs.values_list("pk", "external_id"))
    pairs = pairs.set_index("pair_id", drop=False)
    metrics = [m for m in frames.directions if m in pairs and pairs[m].notna().all()]
    y = pairs["paraphrase"].astype("float").to_numpy()
    drawn = pairs["chosen"].fillna(False).to_numpy(bool) & pairs["choice_probability"].notna().to_numpy()
    y = np.where(drawn, y, np.nan)
    labelled = ~np.isnan(y)
    if labelled.sum() < ppi.MIN_LABELLED or len(np.unique(y[labelled])) < 2:
        raise ActiveChoiceError(
            f"{campaign.slug}: the next wave is guided by the labels so far: wait for at least {ppi.MIN_LABELLED} "
            f"labelled pairs of both classes ({int(labelled.sum())} so far)."
        )
    scores = pd.DataFrame({m: orient(pairs[m].to_numpy(float), frames.directions[m]) for m in metrics})
    out_of_fold, every_pair, _chosen = ppi.cross_fitted(y, scores, seed=int(labelled.sum()))
    design, _notes = ppi.active_design(pairs.reset_index(drop=True), y)
    where = pd.Index(pairs.index).get_indexer([pair_id_of_pk[pk] for pk in block])
    uncertainty = np.sqrt(every_pair * (1 - every_pair))
    return ppi.robust_probabilities(
        uncertainty[where],
        budget,
        seen_uncertainty=np.sqrt(out_of_fold[labelled] * (1 - out_of_fold[labelled])),
        seen_residual=y[labelled] - out_of_fold[labelled],
        seen_weight=1 / design[0][labelled],
    )


def _waves_drawn(campaign):
    return int(campaign.real_pairs.exclude(choice_wave=None).order_by("-choice_wave").values_list(
        "choice_wave", flat=True).first() or 0)  # fmt: skip


def _check_can_draw(campaign, waves_drawn):
    if not campaign.active_choice:
        raise ActiveChoiceError(f"{campaign.slug}: active choice is off; turn it on in the campaign's settings first.")
    if not campaign.ppi_predictor or campaign.ppi_predictor not in METRICS:
        raise ActiveChoiceError(f"{campaign.slug}: choose the predictor metric that guides active choice first.")
    if not campaign.active_budget:
        raise ActiveChoiceError(f"{campaign.slug}: set the budget (how many pairs to judge) first.")
    if waves_drawn >= ppi.WAVES:
        raise ActiveChoiceError(f"{campaign.slug}: every wave ({ppi.WAVES}) is drawn already.")
    if not campaign.real_pairs.exists():
        raise ActiveChoiceError(f"{campaign.slug}: the campaign has no pairs yet; upload a corpus first.")
    if waves_drawn == 0 and campaign.judges.filter(judgments__is_training=False).exists():
        raise ActiveChoiceError(
            f"{campaign.slug}: judges have already answered real pairs; a choice drawn now would not be the one "
            "their pairs were judged under. Start a new campaign to use active choice."
        )
    if waves_drawn >= 1:
        scored = campaign.real_pairs.filter(scores__metric=campaign.ppi_predictor).values("pk").distinct().count()
        total = campaign.real_pairs.count()
        if scored < total:
            raise ActiveChoiceError(
                f"{campaign.ppi_predictor} has scored {scored} of {total} pairs: draw the next wave once the "
                "workers have scored them all."
            )


@transaction.atomic
def _store(campaign, wave, block, sent, chance, probability, drawn):
    rows = [Pair(pk=int(pk), choice_wave=wave) for pk in block[~sent]]  # held back by a selection: undrawn
    rows += [
        Pair(pk=int(pk), choice_wave=wave, choice_probability=float(c * p), chosen=bool(d))
        for pk, c, p, d in zip(block[sent], chance[sent], probability, drawn)
    ]
    Pair.objects.bulk_update([r for r in rows if r.chosen is None], ["choice_wave"], batch_size=2000)
    Pair.objects.bulk_update(
        [r for r in rows if r.chosen is not None], ["choice_wave", "choice_probability", "chosen"], batch_size=2000
    )
    # Reports cached per state of the campaign see the new design.
    Campaign.objects.filter(pk=campaign.pk).update(updated_at=timezone.now())
