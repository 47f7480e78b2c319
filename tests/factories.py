"""Small builders shared by the tests."""

from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Judge, Judgment
from campaigns.models import Pair


def add_pairs(campaign, n, corpus="test"):
    return Pair.objects.bulk_create(
        Pair.build(
            campaign,
            external_id=f"p{i}",
            corpus=corpus,
            source=f"Source sentence number {i}.",
            hypothesis=f"Hypothesis sentence number {i}.",
        )
        for i in range(1, n + 1)
    )


def make_judge(campaign, level="good", guidelines=True):
    campaign.ensure_training_pairs()
    now = timezone.now()
    return Judge.objects.create(
        campaign=campaign, consented_at=now, english_level=level, guidelines_read_at=now if guidelines else None
    )


def without_controls(campaign):
    """Turn hidden control items off, for tests that count pairs exactly."""
    from annotation.controls import protocol_of

    protocol = protocol_of(campaign)
    protocol.control_share = 0
    protocol.save()
    return campaign


def remember(client, judge):
    """Give a test client the judge's cookie, as the browser that joined holds it."""
    client.cookies[f"parasol_judge_{judge.campaign_id}"] = judge.token
    return judge


def judge_by_gold(campaign, pairs, levels=("good", "native")):
    """One judge per English level, each answering every pair as its gold label says (same meaning or not)."""
    for level in levels:
        judge = make_judge(campaign, level=level)
        for position, pair in enumerate(pairs, start=1):
            assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
            label = "same_meaning" if pair.gold_label else "very_different"
            Judgment.objects.create(assignment=assignment, judge=judge, pair=pair, values={"answer": label})


def show_next(client, judge):
    """Open the judge's pair page in this client (as the judge's browser), which shows their next pair;
    returns that assignment, or None when the page sends them on (no pair left, or an earlier step)."""
    remember(client, judge)
    page = client.get(reverse("annotation-show-item", args=[judge.campaign.slug, Judge.path_token]))
    if page.status_code != 200:
        return None
    return judge.assignments.select_related("pair").filter(judgment__isnull=True).order_by("position").first()


def gives_feedback(task_type):
    """Whether a task type shows feedback after a training answer (the contract calls `feedback` optional)."""
    from annotation.tasktypes.base import TaskType

    return type(task_type).feedback is not TaskType.feedback
