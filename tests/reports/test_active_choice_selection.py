"""Active choice on a campaign whose candidates went through generation's selection stage: the draw keeps the
selection's hold-backs, draws only among what the selection sends, and the weights of the two designs multiply."""

import itertools

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.assignment import open_pairs
from campaigns.models import Pair
from generation import llm
from generation.selection import select_candidates
from reports.analysis import ppi
from reports.analysis.ppi import SELECTED, UNSELECTED, active_mean, proportional_probabilities
from reports.cache import compute_report
from scoring.service import score_inline
from tests.factories import judge_by_gold, without_controls
from tests.generation.test_generation_selection import Varied, generated

SHARE, BUDGET = 0.5, 14


@pytest.fixture
def active_campaign(campaign, monkeypatch):
    monkeypatch.setattr(llm, "get_generator", lambda model: Varied())
    campaign.active_choice, campaign.ppi_predictor, campaign.active_budget = True, "bleu", BUDGET
    campaign.save()
    return without_controls(campaign)


def selected_run(campaign):
    run = generated(campaign, selection_metric="lev", unselected_share=SHARE)
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev", "bleu"])
    assert select_candidates(run) == ""
    return run


@pytest.mark.django_db
def test_the_draw_waits_for_the_selection(active_campaign):
    generated(active_campaign, selection_metric="lev", unselected_share=SHARE)
    score_inline(list(active_campaign.real_pairs.values_list("pk", flat=True)), ["bleu"])
    with pytest.raises(CommandError, match="selection has not yet decided 30 candidates"):
        call_command("draw_active_choice", active_campaign.slug, "--seed", "1")
    assert not active_campaign.real_pairs.filter(chosen=True).exists()


@pytest.mark.django_db
def test_the_draw_keeps_the_hold_backs_and_multiplies_the_probabilities(active_campaign):
    run = selected_run(active_campaign)
    outputs = list(run.outputs.select_related("pair"))
    held_back = {o.pair_id for o in outputs if not o.pair.metadata["sent_to_judges"]}
    sent = {o.pair_id for o in outputs} - held_back
    assert held_back and sent and not open_pairs(active_campaign).exists()  # nothing shown before the draw
    call_command("draw_active_choice", active_campaign.slug, "--seed", "1")  # the first, uniform wave
    pairs = {p.pk: p for p in active_campaign.real_pairs.all()}
    block = {pk for pk, p in pairs.items() if p.choice_wave == 1}
    assert len(block) == 10  # a third of the 30 candidates, held back or sent
    assert all(pairs[pk].chosen is False and pairs[pk].choice_probability == SHARE for pk in held_back)
    drawn = {pk for pk in sent & block if pairs[pk].chosen}
    assert set(open_pairs(active_campaign).values_list("pk", flat=True)) == drawn
    assert all(pairs[pk].chosen is None and pairs[pk].choice_probability == (1.0 if pairs[pk].metadata["selected"]
               else SHARE) for pk in sent - block)  # fmt: skip
    order = sorted(sent & block)
    chance = np.array([1.0 if pairs[pk].metadata["selected"] else SHARE for pk in order])
    uniform = min(1.0, BUDGET / 3 / len(order))  # the wave spends a third of the budget over its sent pairs
    assert [pairs[pk].choice_probability for pk in order] == pytest.approx(chance * uniform)


@pytest.mark.django_db
def test_the_selection_table_weights_each_judged_candidate_by_both_designs(active_campaign, monkeypatch):
    monkeypatch.setattr(ppi, "WAVES", 1)  # one wave over every candidate: enough labels on 30 candidates
    selected_run(active_campaign)
    call_command("draw_active_choice", active_campaign.slug, "--seed", "3")
    drawn = list(active_campaign.real_pairs.filter(chosen=True).order_by("pk"))
    rng = np.random.default_rng(0)
    for pair in drawn:
        pair.gold_label = int(rng.random() < 0.6)
    Pair.objects.bulk_update(drawn, ["gold_label"])
    judge_by_gold(active_campaign, drawn, levels=("good",))
    report, _frames = compute_report([active_campaign], "human")
    table = report.tables["selection"].set_index("candidates")
    for kind, is_selected in ((SELECTED, True), (UNSELECTED, False)):
        group = [p for p in drawn if p.metadata["selected"] == is_selected]
        if table.loc[kind, "n_labelled"] >= 10:
            weighted = sum(p.gold_label / p.choice_probability for p in group) / sum(
                1 / p.choice_probability for p in group
            )  # Hájek, by hand
            assert table.loc[kind, "human"] == pytest.approx(weighted)
            assert table.loc[kind, "interval"] == "normal, weighted"
        else:  # too few for the normal interval; unequal weights rule out a count's interval
            assert table.loc[kind, "human_low"] != table.loc[kind, "human_low"]
    overall = report.tables["estimates"].iloc[0]
    assert overall["design"] == "active"
    everything = sum(p.gold_label / p.choice_probability for p in drawn) / sum(1 / p.choice_probability for p in drawn)
    assert overall["human"] == pytest.approx(everything)


@pytest.mark.parametrize("lam", [0.0, 0.6])
def test_the_multiplied_weights_are_unbiased_over_every_outcome_of_both_draws(lam):
    """Exhaustive: every outcome of the selection's draw, then of active choice among the sent candidates
    (its probabilities computed on them, as `reports.active` does): the estimate's expectation is the mean."""
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    score = np.array([0.9, 0.2, 0.6, 0.4, 0.1])
    predicted = np.array([0.8, 0.3, 0.5, 0.6, 0.2])
    chance = np.array([1.0, 0.3, 1.0, 0.3, 0.3])  # two selected, three unselected sent with a share of 0.3
    expectation = 0.0
    for sent in itertools.product([False, True], repeat=len(y)):
        sent = np.array(sent)
        if not sent[chance == 1.0].all():
            continue
        p_sent = np.prod(np.where(chance == 1.0, 1.0, np.where(sent, chance, 1 - chance)))
        active = np.zeros(len(y))
        active[sent] = 0.5 * proportional_probabilities(score[sent], 1.5) + 0.5 * 1.5 / sent.sum()  # rho = 0.5
        for drawn in itertools.product([False, True], repeat=int(sent.sum())):
            xi = np.zeros(len(y), dtype=bool)
            xi[sent] = drawn
            p_drawn = np.prod(np.where(xi, active, 1 - active)[sent])
            probability = np.where(sent, chance * active, chance)
            estimate, _se, _lam = active_mean(np.where(xi, y, np.nan), predicted, probability, xi, lam=lam)
            expectation += p_sent * p_drawn * estimate
    assert expectation == pytest.approx(y.mean(), abs=1e-12)
