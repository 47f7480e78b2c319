"""A judge whose reservations lapsed cannot push a pair past its overlap target (issue 48).

A reservation counts in its pair's load for the idle window (before the judge's first real answer)
or the working one; once it lapses the pair is open to others. The lapsed judge's answer then counts
only while the pair still wants one; once others filled it, nothing is stored and the judge gets
their next pair ("given to someone else while you were away").
"""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.urls import reverse
from django.utils import timezone

from annotation import assignment as assign
from annotation.models import Assignment, Judgment
from campaigns.models import Campaign, Pair
from tests.factories import add_pairs, make_judge, remember, without_controls


def answer_training(judge):
    while (current := assign.next_assignment(judge)) is not None and current.is_training:
        assign.record_judgment(current, {"answer": "same_meaning"}, 1000)


def lapse(judge, settings):
    """Age every unanswered assignment of `judge` past the idle window (they have answered no real pair)."""
    aged = timezone.now() - timedelta(minutes=settings.PARASOL_IDLE_RESERVATION_MINUTES + 1)
    Assignment.objects.filter(judge=judge, judgment__isnull=True).update(assigned_at=aged)


def judgments_per_pair(campaign) -> dict[int, int]:
    counted = Judgment.objects.filter(pair__campaign=campaign, is_training=False).values("pair_id")
    return {row["pair_id"]: row["n"] for row in counted.annotate(n=Count("pk"))}


@pytest.fixture
def small(campaign):
    add_pairs(campaign, 5)
    campaign.overlap_target = 1
    campaign.pairs_per_judge = 5
    campaign.save()
    return without_controls(campaign)


def test_a_judge_whose_reserved_pairs_lapsed_cannot_push_them_past_the_target(small, settings):
    """The default windows: 5 pairs reserved before training, the judge idle past the window, another judge
    takes and answers all 5; the first judge's answers to them are refused and no pair gets 2 judgments."""
    away = make_judge(small)
    assert assign.reserve_before_training(away, wanted=5) == 5
    held = list(Assignment.objects.filter(judge=away, is_training=False).order_by("position"))
    lapse(away, settings)
    other = make_judge(small)
    answer_training(other)
    for _ in range(5):
        current = assign.next_assignment(other)
        assign.record_judgment(current, {"answer": "same_meaning"}, 1000)
    assert set(judgments_per_pair(small).values()) == {1}
    answer_training(away)
    for assignment in held:
        with pytest.raises(assign.PairGivenAway):
            assign.record_judgment(assignment, {"answer": "very_different"}, 1000)
    assert set(judgments_per_pair(small).values()) == {1}
    assert assign.next_assignment(away) is None  # their lapsed pairs were released, and none is left
    assert not Assignment.objects.filter(judge=away, is_training=False).exists()


def test_a_lapsed_answer_counts_while_the_pair_still_wants_one(small, settings):
    away = make_judge(small)
    answer_training(away)
    current = assign.next_assignment(away)
    lapse(away, settings)
    assert not assign.still_reserved(Assignment.objects.get(pk=current.pk))
    judgment, created = assign.record_judgment(Assignment.objects.get(pk=current.pk), {"answer": "same_meaning"}, 1000)
    assert created and judgment.pair_id == current.pair_id


def test_a_judge_back_from_away_is_shown_another_pair_when_theirs_was_filled(small, settings):
    """`next_assignment` releases a lapsed, filled pair and hands the next open one; a lapsed pair still open
    is taken again (counted from now) rather than dropped."""
    away = make_judge(small)
    answer_training(away)
    first = assign.next_assignment(away)
    lapse(away, settings)
    other = make_judge(small)
    answer_training(other)
    taken = assign.next_assignment(other)
    while taken.pair_id != first.pair_id:  # the other judge answers until they have filled the away judge's pair
        assign.record_judgment(taken, {"answer": "same_meaning"}, 1000)
        taken = assign.next_assignment(other)
    assign.record_judgment(taken, {"answer": "same_meaning"}, 1000)
    # The other judge may have filled every pair before reaching the away judge's (the order is random):
    # one pair added now is certainly open, so "the next open one" exists whatever that order was.
    late = Pair.build(small, external_id="late", corpus="test", source="A late source.", hypothesis="A late one.")
    late.save()
    again = assign.next_assignment(away)
    assert again is not None and again.pair_id != first.pair_id
    lapse(away, settings)
    kept = assign.next_assignment(away)
    assert kept.pk == again.pk and assign.still_reserved(kept)


def test_the_page_says_the_pair_was_given_to_someone_else_and_shows_the_next(client, small, settings):
    away = make_judge(small)
    remember(client, away)
    answer_training(away)
    mine = assign.next_assignment(away)
    Assignment.objects.filter(pk=mine.pk).update(shown_at=timezone.now())
    lapse(away, settings)
    other = make_judge(small)
    answer_training(other)
    while (taken := assign.next_assignment(other)).pair_id != mine.pair_id:
        assign.record_judgment(taken, {"answer": "same_meaning"}, 1000)
    assign.record_judgment(taken, {"answer": "same_meaning"}, 1000)
    Pair.objects.create(campaign=small, source="One more.", hypothesis="Another.", external_id="more")  # open
    url = reverse("annotation-record-answer", args=[small.slug, away.token])
    response = client.post(url, {"assignment": mine.pk, "answer": "very_different", "response_ms": "1500"})
    assert response.status_code == 200
    assert "given to someone else while you were away" in response.content.decode()
    assert judgments_per_pair(small)[mine.pair_id] == 1
    following = assign.pending_assignment(away)
    assert following is not None and following.pair_id != mine.pair_id
    assert f'value="{following.pk}"' in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_lapsed_and_fresh_judges_answering_at_once_never_exceed_the_target(researcher, settings):
    """Judges with lapsed reservations answer them while fresh judges take and answer the same pairs, all at
    once (threads, each its own connection): every pair ends at its target or below."""
    campaign = Campaign.objects.create(slug="lapse-race", name="Lapse race", overlap_target=2, pairs_per_judge=4)
    add_pairs(campaign, 4)
    without_controls(campaign)
    away = [make_judge(campaign) for _ in range(3)]
    held = {}
    for judge in away:
        answer_training(judge)
        held[judge.pk] = [assign.next_assignment(judge)]
        lapse(judge, settings)
    fresh = [make_judge(campaign) for _ in range(4)]
    for judge in fresh:
        answer_training(judge)
    barrier = threading.Barrier(len(away) + len(fresh))
    errors = []

    def lapsed_answers(judge):
        try:
            barrier.wait()
            for assignment in held[judge.pk]:
                try:
                    assign.record_judgment(Assignment.objects.get(pk=assignment.pk), {"answer": "same_meaning"}, 1000)
                except (assign.PairGivenAway, Assignment.DoesNotExist):
                    pass
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    def fresh_answers(judge):
        try:
            barrier.wait()
            while (current := assign.next_assignment(judge)) is not None:
                assign.record_judgment(current, {"answer": "same_meaning"}, 1000)
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=lapsed_answers, args=(judge,)) for judge in away]
    threads += [threading.Thread(target=fresh_answers, args=(judge,)) for judge in fresh]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    counts = judgments_per_pair(campaign)
    assert max(counts.values()) <= 2
    assert sum(counts.values()) == 8  # and every pair reached it: 4 fresh judges of 4 pairs fill 4 x 2
