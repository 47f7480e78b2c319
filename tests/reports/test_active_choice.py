"""Active choice: the waves and their stored probabilities, the pairs judges are handed, the page before and
after each draw, the Draw action, and the weighted estimates."""

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import assignment as assign
from annotation.models import Judgment
from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from reports.cache import compute_report
from tests.factories import judge_by_gold, make_judge, without_controls

N, BUDGET = 120, 60


@pytest.fixture
def campaign(researcher):
    rng = np.random.default_rng(11)
    truth = rng.random(N) < 0.6
    lines = ["id,source,hypothesis,label,system"] + [
        f"p{i},Source number {i} here.,Hypothesis {i} there.,{int(truth[i])},{'AB'[i % 2]}" for i in range(N)
    ]
    campaign = Campaign.objects.create(
        slug="active", name="Active", created_by=researcher, active_choice=True, ppi_predictor="bleu",
        active_budget=BUDGET,
    )  # fmt: skip
    without_controls(campaign)
    import_pairs(campaign, "\n".join(lines).encode(), filename="pairs.csv")
    for pair in campaign.real_pairs.all():
        index = int(pair.external_id[1:])
        value = 0.3 * truth[index] + rng.normal(0.4, 0.15)
        Score.objects.create(pair=pair, metric="bleu", signature="metric:bleu|version:1", value=float(value))
    return campaign


def draw(seed):
    call_command("draw_active_choice", "active", "--seed", str(seed))


def label_drawn(campaign):
    """Judges answer every drawn pair not yet answered, as its gold label says."""
    pairs = list(campaign.real_pairs.filter(chosen=True, judgments__isnull=True))
    judge_by_gold(campaign, pairs, levels=("good",))


def test_no_real_pair_is_handed_out_before_the_draw(campaign):
    assert not assign.open_pairs(campaign).exists()


def test_before_the_draw_the_judge_link_says_the_study_opens_shortly_never_that_it_is_full(campaign, client):
    page = client.get(reverse("annotation-show-welcome", args=[campaign.slug])).content.decode()
    assert "opens shortly" in page
    assert "already has all the answers it needs" not in page and "all the judges it needs" not in page


def test_before_the_draw_the_campaign_page_says_active_choice_is_waiting(campaign, client, researcher):
    client.force_login(researcher)
    page = client.get(campaign.get_absolute_url()).content.decode()
    assert "waiting for the first draw" in page
    panel = client.get(reverse("reports-show-active-choice", args=[campaign.slug])).content.decode()
    assert "waiting for its first draw" in panel and "Waves drawn: 0 of 3" in panel
    assert f"scored {N} / {N} pairs" in panel and f"Budget used: 0 of {BUDGET}" in panel
    assert "Draw wave 1" in panel


def test_the_first_wave_is_uniform_over_a_random_third_and_each_assignment_keeps_its_probability(campaign):
    draw(1)
    block = campaign.real_pairs.filter(choice_wave=1)
    assert block.count() == N // 3
    assert list(block.values_list("choice_probability", flat=True)) == pytest.approx([BUDGET / 3 / (N // 3)] * (N // 3))
    assert not campaign.real_pairs.filter(choice_wave__isnull=True, chosen__isnull=False).exists()
    drawn = set(campaign.real_pairs.filter(chosen=True).values_list("pk", flat=True))
    assert drawn and set(assign.open_pairs(campaign).values_list("pk", flat=True)) == drawn
    judge = make_judge(campaign)
    judge.training_completed_at = judge.consented_at
    pair = assign._next_real_pair(judge)
    assert pair.pk in drawn
    made = assign._create_assignment(judge, pair, is_training=False)
    assert made.choice_probability == pair.choice_probability


def test_later_waves_follow_the_labels_so_far_store_their_probabilities_and_keep_the_budget(campaign):
    draw(1)
    with pytest.raises(CommandError, match="wait for at least 10 labelled pairs"):
        draw(2)
    label_drawn(campaign)
    spent = campaign.real_pairs.filter(chosen=True).count()
    draw(2)
    second = campaign.real_pairs.filter(choice_wave=2)
    assert second.count() == round((N - N // 3) / 2)
    probabilities = np.array(list(second.values_list("choice_probability", flat=True)))
    assert probabilities.sum() == pytest.approx((BUDGET - spent) / 2, rel=1e-6)
    assert probabilities.max() <= 1 and probabilities.min() >= 0.1 * probabilities.mean() - 1e-12
    label_drawn(campaign)
    draw(3)
    assert not campaign.real_pairs.filter(choice_wave__isnull=True).exists()  # the last wave takes the rest
    assert set(campaign.real_pairs.values_list("choice_wave", flat=True)) == {1, 2, 3}
    with pytest.raises(CommandError, match="every wave"):
        draw(4)


def test_a_later_wave_needs_every_pair_scored_by_the_predictor(campaign):
    draw(1)
    label_drawn(campaign)
    Score.objects.filter(pair__external_id="p0").delete()
    with pytest.raises(CommandError, match=f"scored {N - 1} of {N} pairs"):
        draw(2)


def test_the_first_draw_is_refused_once_judges_have_answered_real_pairs(campaign):
    pairs = list(campaign.real_pairs.all()[:2])
    judge_by_gold(campaign, pairs, levels=("good",))
    with pytest.raises(CommandError, match="already answered real pairs"):
        draw(1)


def test_the_estimates_are_hajeks_and_active_inferences_over_the_waves(campaign):
    draw(1)
    label_drawn(campaign)
    draw(2)
    label_drawn(campaign)
    report, _frames = compute_report([campaign], "human")
    overall = report.tables["estimates"].iloc[0]
    assert overall["design"] == "active" and overall["group"] == "All pairs"
    in_waves = list(campaign.real_pairs.filter(choice_wave__isnull=False).order_by("pk"))
    assert overall["n_pairs"] == len(in_waves)
    drawn = [p for p in in_waves if p.chosen]
    hajek = sum(p.gold_label / p.choice_probability for p in drawn) / sum(1 / p.choice_probability for p in drawn)
    assert overall["human"] == pytest.approx(hajek)  # by hand
    assert overall["ppi_low"] < overall["ppi"] < overall["ppi_high"]


def test_a_dont_know_leaves_its_pair_unlabelled_and_its_wave_reweighted(campaign):
    draw(1)
    label_drawn(campaign)
    unsure = Judgment.objects.filter(pair__choice_wave=1).first()
    unsure.values = {"answer": "dont_know"}
    unsure.save()
    report, _frames = compute_report([campaign], "human")
    overall = report.tables["estimates"].iloc[0]
    drawn = list(campaign.real_pairs.filter(chosen=True))
    answered = [p for p in drawn if p.pk != unsure.pair_id]
    response = len(answered) / len(drawn)
    weights = [1 / (p.choice_probability * response) for p in answered]
    hajek = sum(w * p.gold_label for w, p in zip(weights, answered)) / sum(weights)
    assert overall["n_labelled"] == len(answered) and overall["human"] == pytest.approx(hajek)
    assert any("wave 1" in note and "missing at random" in note for note in report.notes)


# --- the Draw action -----------------------------------------------------------------------


def test_the_owner_draws_a_wave_from_the_page(campaign, client, researcher):
    client.force_login(researcher)
    url = reverse("reports-draw-active-choice", args=[campaign.slug])
    panel = client.post(url, headers={"HX-Request": "true"}).content.decode()
    assert "Wave 1 drawn" in panel and "Waves drawn: 1 of 3" in panel
    assert campaign.real_pairs.filter(choice_wave=1).exists()
    refused = client.post(url, headers={"HX-Request": "true"}).content.decode()  # wave 2 needs labels: said
    assert "No wave drawn" in refused and "labelled pairs" in refused
    assert not campaign.real_pairs.filter(choice_wave=2).exists()
    assert client.post(url).status_code == 302  # a plain form post goes back to the campaign page
    assert client.get(url).status_code == 405


def test_outsiders_and_colleagues_cannot_draw(campaign, client, outsider):
    url = reverse("reports-draw-active-choice", args=[campaign.slug])
    client.force_login(outsider)
    assert client.post(url).status_code in (302, 403, 404)  # not a researcher: sent away
    colleague = get_user_model().objects.create_user("colleague", password="pw-colleague-123", is_staff=True)
    campaign.shared_with.add(colleague)
    client.force_login(colleague)
    assert client.post(url).status_code == 404
    panel = client.get(reverse("reports-show-active-choice", args=[campaign.slug])).content.decode()
    assert "Waves drawn: 0 of 3" in panel and "Draw wave" not in panel  # they follow it, without the button
    stranger = get_user_model().objects.create_user("stranger", password="pw-stranger-123", is_staff=True)
    client.force_login(stranger)
    assert client.get(reverse("reports-show-active-choice", args=[campaign.slug])).status_code == 404
    assert client.post(url).status_code == 404
    assert not campaign.real_pairs.filter(choice_wave__isnull=False).exists()
