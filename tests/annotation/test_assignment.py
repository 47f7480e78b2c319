import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation import assignment as assign
from annotation.models import Assignment, Judgment
from tests.factories import add_pairs, make_judge


def answer_all_training(judge):
    for _ in range(5):
        current = assign.next_assignment(judge)
        assert current.is_training
        assign.record_judgment(current, {"answer": "same_meaning"}, 1000)


def test_it_starts_with_the_same_five_training_pairs_for_every_judge(campaign):
    add_pairs(campaign, 3)
    sequences = []
    for _ in range(2):
        judge = make_judge(campaign)
        seq = []
        for _ in range(5):
            current = assign.next_assignment(judge)
            seq.append(current.pair_id)
            assign.record_judgment(current, {"answer": "dont_know"})
        sequences.append(seq)
    assert sequences[0] == sequences[1]
    assert len(set(sequences[0])) == 5


def test_it_never_gives_a_judge_the_same_pair_twice(campaign):
    add_pairs(campaign, 4)
    campaign.overlap_target = 10
    campaign.save()
    judge = make_judge(campaign)
    answer_all_training(judge)
    seen = []
    while (current := assign.next_assignment(judge)) is not None:
        seen.append(current.pair_id)
        assign.record_judgment(current, {"answer": "mostly_similar"})
    assert len(seen) == 4 == len(set(seen))


def test_it_stops_at_pairs_per_judge(campaign):
    add_pairs(campaign, 10)
    campaign.pairs_per_judge = 3
    campaign.save()
    judge = make_judge(campaign)
    answer_all_training(judge)
    answered = 0
    while (current := assign.next_assignment(judge)) is not None:
        assign.record_judgment(current, {"answer": "mostly_similar"})
        answered += 1
    assert answered == 3


def test_it_gives_least_judged_pairs_first(campaign):
    add_pairs(campaign, 3)
    campaign.overlap_target = 3
    campaign.save()
    first_pairs = []
    for _ in range(3):
        judge = make_judge(campaign)
        answer_all_training(judge)
        current = assign.next_assignment(judge)
        first_pairs.append(current.pair_id)
        assign.record_judgment(current, {"answer": "same_meaning"})
    # Three judges, three pairs: each first gets a different, still unjudged pair.
    assert len(set(first_pairs)) == 3


def test_it_does_not_assign_beyond_the_overlap_target(campaign):
    add_pairs(campaign, 2)
    campaign.overlap_target = 1
    campaign.save()
    got = []
    for _ in range(3):
        judge = make_judge(campaign)
        answer_all_training(judge)
        current = assign.next_assignment(judge)
        got.append(current)
        if current:
            assign.record_judgment(current, {"answer": "same_meaning"})
    assert got[2] is None
    assert {a.pair_id for a in got[:2]} == set(campaign.real_pairs.values_list("pk", flat=True))


def test_it_releases_a_pair_reserved_by_an_abandoned_assignment(campaign, settings):
    add_pairs(campaign, 1)
    campaign.overlap_target = 1
    campaign.save()
    quitter = make_judge(campaign)
    answer_all_training(quitter)
    abandoned = assign.next_assignment(quitter)
    other = make_judge(campaign)
    answer_all_training(other)
    assert assign.next_assignment(other) is None
    Assignment.objects.filter(pk=abandoned.pk).update(
        assigned_at=timezone.now() - timedelta(minutes=settings.PARASOL_ASSIGNMENT_RESERVATION_MINUTES + 1)
    )
    assert assign.next_assignment(other).pair_id == abandoned.pair_id


def test_it_records_a_repeated_answer_once(campaign):
    add_pairs(campaign, 1)
    judge = make_judge(campaign)
    current = assign.next_assignment(judge)
    first, created = assign.record_judgment(current, {"answer": "same_meaning"}, 1200)
    second, created_again = assign.record_judgment(current, {"answer": "very_different"}, 50)
    assert created and not created_again
    assert first.pk == second.pk
    assert Judgment.objects.get().values == {"answer": "same_meaning"}


def test_it_falls_back_to_server_timing_without_a_client_measure(campaign):
    add_pairs(campaign, 1)
    judge = make_judge(campaign)
    current = assign.next_assignment(judge)
    Assignment.objects.filter(pk=current.pk).update(shown_at=timezone.now() - timedelta(seconds=3))
    current.refresh_from_db()
    judgment, _ = assign.record_judgment(current, {"answer": "same_meaning"}, None)
    assert 2900 <= judgment.response_ms < 60_000


def test_a_closed_campaign_assigns_nothing(campaign):
    add_pairs(campaign, 2)
    judge = make_judge(campaign)
    campaign.is_open = False
    campaign.save()
    assert assign.next_assignment(judge) is None


@pytest.mark.django_db(transaction=True)
def test_two_racing_judges_do_not_overfill_a_pair(researcher):
    """Many judges take their first real pair at the same moment: each pair gets at most the target."""
    from campaigns.models import Campaign

    campaign = Campaign.objects.create(slug="race", name="Race", overlap_target=1)
    add_pairs(campaign, 6)
    judges = [make_judge(campaign) for _ in range(6)]
    for judge in judges:
        answer_all_training(judge)
    barrier = threading.Barrier(len(judges))
    results, errors = [], []

    def take(judge):
        try:
            barrier.wait()
            results.append(assign.next_assignment(judge))
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=take, args=(judge,)) for judge in judges]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    pair_pks = [a.pair_id for a in results]
    assert len(pair_pks) == 6 == len(set(pair_pks))
