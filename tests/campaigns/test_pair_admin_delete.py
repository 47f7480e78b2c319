"""The admin deletes a pair no judge saw with its scores, one at a time or in bulk; a pair that judges saw, or a score
alone, it refuses (their work is evidence)."""

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Judge
from campaigns.models import Campaign, Pair, Score


@pytest.fixture
def admin_client(client, django_user_model):
    owner = django_user_model.objects.create_superuser("owner", password="pw-owner-123")
    client.force_login(owner)
    return client


@pytest.fixture
def scored_pairs(db):
    campaign = Campaign.objects.create(slug="deleting", name="Deleting")
    pairs = [
        Pair.objects.create(campaign=campaign, external_id=f"p{i}", source=f"Source {i}.", hypothesis=f"Other {i}.")
        for i in range(4)
    ]
    for pair in pairs:
        Score.objects.create(pair=pair, metric="lev", signature="lev:v1", value=0.5)
    return campaign, pairs


def bulk_delete(client, pairs):
    chosen = [pair.pk for pair in pairs]
    return client.post(
        reverse("admin:campaigns_pair_changelist"),
        {"action": "delete_selected", "_selected_action": chosen, "post": "yes"},
    )


def test_a_scored_pair_no_judge_saw_is_deleted_with_its_scores_in_bulk_and_alone(admin_client, scored_pairs):
    _campaign, pairs = scored_pairs
    assert bulk_delete(admin_client, pairs[:2]).status_code == 302
    one = admin_client.post(reverse("admin:campaigns_pair_delete", args=[pairs[2].pk]), {"post": "yes"})
    assert one.status_code == 302
    assert list(Pair.objects.values_list("external_id", flat=True)) == ["p3"]
    assert list(Score.objects.values_list("pair__external_id", flat=True)) == ["p3"]


def test_a_pair_judges_saw_and_a_score_alone_are_still_refused(admin_client, scored_pairs):
    campaign, pairs = scored_pairs
    now = timezone.now()
    judge = Judge.objects.create(campaign=campaign, consented_at=now, english_level="good", guidelines_read_at=now)
    Assignment.objects.create(judge=judge, pair=pairs[0], position=1, top="source")
    assert bulk_delete(admin_client, pairs[:2]).status_code == 403
    score = Score.objects.get(pair=pairs[1])
    alone = admin_client.post(reverse("admin:campaigns_score_delete", args=[score.pk]), {"post": "yes"})
    assert alone.status_code == 403
    assert Pair.objects.count() == 4 and Score.objects.count() == 4
