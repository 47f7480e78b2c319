"""The judge's counter promises what they will really get."""

import pytest
from django.urls import reverse

from annotation import assignment as assign
from annotation.controls import protocol_of
from annotation.joining import join
from annotation.models import Judge
from tests.factories import add_pairs, make_judge, remember, without_controls

pytestmark = pytest.mark.django_db


def answer_current(judge, label="same_meaning"):
    current = assign.next_assignment(judge)
    assign.record_judgment(current, {"answer": label}, 1000)
    return current


@pytest.mark.parametrize(
    "positions, reals, length",
    [
        ([], 5, 5),
        ([2, 4], 5, 7),
        ([2, 9], 3, 4),  # the control planned at 9 is never reached: the phase ends after 4
        ([1], 0, 1),
        ([], 0, 0),
    ],
)
def test_the_planned_length_drops_controls_past_the_last_real_pair(positions, reals, length):
    assert assign.planned_length(set(positions), reals) == length


def test_it_caps_the_total_by_the_pairs_that_exist(campaign):
    """20 pairs and 50 planned per judge used to show "1 / 56"."""
    add_pairs(campaign, 20)
    judge = join(campaign, key="k", crowd={})
    progress = assign.judge_progress(judge)
    controls = len(judge.control_positions)
    assert controls > 0
    assert progress["real_total"] <= 20 + controls
    assert progress["real_total"] >= 20  # every pair is still open to this judge
    assert progress["real_planned"] == 50 + controls


def test_the_total_shrinks_when_the_campaign_runs_dry(campaign, settings):
    settings.PARASOL_PAIRS_RESERVED_BEFORE_TRAINING = 2
    add_pairs(campaign, 6)
    campaign.pairs_per_judge = 6
    campaign.overlap_target = 1
    campaign.save()
    without_controls(campaign)
    judge = join(campaign, key="k", crowd={})
    assert assign.judge_progress(judge)["real_total"] == 6
    # A second judge takes the four pairs this one has not reserved.
    rival = join(campaign, key="r", crowd={})
    while assign.next_assignment(rival) is not None:
        answer_current(rival)
    assert rival.judgments.filter(is_training=False).count() == 4
    assert assign.judge_progress(judge)["real_total"] == 2
    # Working through everything, the counter matched what the judge got.
    answered = 0
    while (current := assign.next_assignment(judge)) is not None:
        assign.record_judgment(current, {"answer": "mostly_similar"})
        answered += not current.is_training
    assert answered == 2 == assign.judge_progress(judge)["real_total"]


def test_the_item_page_shows_the_capped_total(client, campaign):
    add_pairs(campaign, 4)
    without_controls(campaign)
    judge = make_judge(campaign)
    for _ in range(5):
        answer_current(judge)
    remember(client, judge)
    page = client.get(reverse("annotation-show-item", args=[campaign.slug, judge.token])).content.decode()
    assert "1 / 4" in page and "1 / 50" not in page


def test_a_judge_sees_their_planned_controls_in_the_total(campaign):
    add_pairs(campaign, 30)
    campaign.pairs_per_judge = 10
    campaign.save()
    protocol = protocol_of(campaign)
    protocol.control_share = 0.2
    protocol.save()
    judge = join(campaign, key="k", crowd={})
    assert assign.judge_progress(judge)["real_total"] == 10 + len(judge.control_positions)
    assert Judge.objects.count() == 1
