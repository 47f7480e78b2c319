"""A judge admitted to training has real pairs waiting at the end of it."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import assignment as assign
from annotation.joining import join
from annotation.models import Assignment, Judge
from tests.factories import add_pairs, without_controls

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(campaign):
    add_pairs(campaign, 4)
    campaign.overlap_target = 1
    campaign.pairs_per_judge = 3
    campaign.save()
    return without_controls(campaign)


def test_it_reserves_the_first_real_pairs_at_join(small):
    judge = join(small, key="k", crowd={})
    assignments = list(judge.assignments.order_by("position"))
    assert [a.is_training for a in assignments] == [True] * 5 + [False] * 3
    assert [a.position for a in assignments] == list(range(1, 9))
    assert not judge.judgments.exists()
    # Training still comes first, in its fixed order.
    first = assign.next_assignment(judge)
    assert first.is_training and first.pair.training_position == 1


def test_a_rival_cannot_take_what_a_trainee_reserved(small):
    trainee = join(small, key="k", crowd={})
    reserved = set(trainee.assignments.filter(is_training=False).values_list("pair_id", flat=True))
    rival = join(small, key="r", crowd={})
    while (current := assign.next_assignment(rival)) is not None:
        assign.record_judgment(current, {"answer": "same_meaning"})
    taken = set(rival.judgments.filter(is_training=False).values_list("pair_id", flat=True))
    assert taken and not taken & reserved
    # The trainee trains, then gets exactly the pairs kept for them.
    got = set()
    while (current := assign.next_assignment(trainee)) is not None:
        assign.record_judgment(current, {"answer": "same_meaning"})
        if not current.is_training:
            got.add(current.pair_id)
    assert got == reserved


def test_a_judge_is_told_at_the_start_when_nothing_is_left(client, small):
    join(small, key="a", crowd={})  # three pairs reserved
    join(small, key="b", crowd={})  # the last one
    response = client.post(reverse("annotation-show-welcome", args=[small.slug]), {"consent": "yes"})
    assert response.status_code == 200
    assert "nothing left to label" in response.content.decode()
    assert Judge.objects.count() == 2, "no judge is created to train for nothing"


def test_reservations_made_at_join_still_expire(small, settings):
    trainee = join(small, key="k", crowd={})
    assert not assign.open_pairs(small).filter(pk__in=trainee.assignments.values("pair_id")).exists()
    long_ago = timezone.now() - timedelta(minutes=settings.PARASOL_ASSIGNMENT_RESERVATION_MINUTES + 1)
    Assignment.objects.filter(judge=trainee).update(assigned_at=long_ago)
    assert assign.open_pairs(small).count() == 4
