"""Active choice: the draw, the pairs judges are handed, the probability kept, the weighted estimates."""

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation import assignment as assign
from campaigns.importers import import_pairs
from campaigns.models import Campaign
from reports.cache import compute_report
from scoring.models import Score
from tests.factories import judge_by_gold, make_judge, without_controls

N = 120


@pytest.fixture
def campaign(researcher):
    rng = np.random.default_rng(11)
    truth = rng.random(N) < 0.6
    lines = ["id,source,hypothesis,label,system"] + [
        f"p{i},Source number {i} here.,Hypothesis {i} there.,{int(truth[i])},{'AB'[i % 2]}" for i in range(N)
    ]
    campaign = Campaign.objects.create(
        slug="active", name="Active", created_by=researcher, active_choice=True, ppi_predictor="bleu", active_budget=40
    )
    without_controls(campaign)
    import_pairs(campaign, "\n".join(lines).encode(), filename="pairs.csv")
    for pair in campaign.real_pairs.all():
        index = int(pair.external_id[1:])
        value = 0.3 * truth[index] + rng.normal(0.4, 0.15)
        Score.objects.create(pair=pair, metric="bleu", signature="metric:bleu|version:1", value=float(value))
    return campaign


def test_no_real_pair_is_handed_out_before_the_draw(campaign):
    assert not assign.open_pairs(campaign).exists()


def test_the_draw_needs_every_pair_scored(campaign):
    Score.objects.filter(pair__external_id="p0").delete()
    with pytest.raises(CommandError, match="scored 119 of 120 pairs"):
        call_command("draw_active_choice", "active", "--seed", "1")


def test_judges_see_only_drawn_pairs_and_each_assignment_keeps_its_probability(campaign):
    call_command("draw_active_choice", "active", "--seed", "1")
    drawn = set(campaign.real_pairs.filter(chosen=True).values_list("pk", flat=True))
    assert 15 < len(drawn) < 70  # 40 expected
    probabilities = list(campaign.real_pairs.values_list("choice_probability", flat=True))
    assert sum(probabilities) == pytest.approx(40, rel=1e-6) and min(probabilities) > 0
    assert set(assign.open_pairs(campaign).values_list("pk", flat=True)) == drawn
    judge = make_judge(campaign)
    judge.training_completed_at = judge.consented_at
    pair = assign._next_real_pair(judge)
    assert pair.pk in drawn
    made = assign._create_assignment(judge, pair, is_training=False)
    assert made.choice_probability == pair.choice_probability


def test_the_draw_is_refused_once_judges_have_answered_real_pairs(campaign):
    call_command("draw_active_choice", "active", "--seed", "1")
    judge_by_gold(campaign, list(campaign.real_pairs.filter(chosen=True)[:2]), levels=("good",))
    with pytest.raises(CommandError, match="already answered real pairs"):
        call_command("draw_active_choice", "active", "--seed", "2")


def test_the_estimates_weight_the_drawn_pairs_by_their_probability(campaign):
    call_command("draw_active_choice", "active", "--seed", "1")
    judge_by_gold(campaign, list(campaign.real_pairs.filter(chosen=True)), levels=("good",))
    report, _frames = compute_report([campaign], "human")
    estimates = report.tables["estimates"]
    overall = estimates.iloc[0]
    assert overall["design"] == "active" and overall["group"] == "All pairs"
    gold = np.array(list(campaign.real_pairs.order_by("pk").values_list("gold_label", flat=True)), dtype=float)
    pairs = list(campaign.real_pairs.order_by("pk").values_list("choice_probability", "chosen"))
    weighted = sum(g / p for g, (p, chosen) in zip(gold, pairs, strict=True) if chosen) / N
    assert overall["human"] == pytest.approx(weighted)  # Horvitz-Thompson, computed here by hand
    assert overall["ppi_low"] < overall["ppi"] < overall["ppi_high"]
