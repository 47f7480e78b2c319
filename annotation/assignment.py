"""Which pair a judge sees next, and recording their answer.

A judge first works through the campaign's training trial, in its fixed
order, then gets real pairs one at a time: pairs they have not seen, still
short of the campaign's overlap target, least-judged first, random among
ties. Every assignment happens while holding a lock on the campaign row
(an UPDATE, so it works the same on PostgreSQL and SQLite), which is what
keeps two racing judges from both taking the last slot of a pair while
other pairs still wait.
"""

import random
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from campaigns.models import Campaign, Pair

from .models import Assignment, Judgment
from .tasktypes.registry import task_type_of

# A client-side timing beyond a day is not a measurement; fall back to the server's.
MAX_PLAUSIBLE_RESPONSE_MS = 24 * 3600 * 1000


def _lock_campaign(campaign_id):
    Campaign.objects.filter(pk=campaign_id).update(assignment_seq=F("assignment_seq") + 1)


def pairs_with_load(campaign):
    """Real pairs annotated with `load`: judgments given plus assignments still reserved."""
    reserved_since = timezone.now() - timedelta(minutes=settings.ASSIGNMENT_RESERVATION_MINUTES)
    counts = Q(assignments__judgment__isnull=False) | Q(assignments__assigned_at__gte=reserved_since)
    return campaign.real_pairs.annotate(load=Count("assignments", filter=counts))


def open_pairs(campaign):
    """Pairs that still need judgments."""
    return pairs_with_load(campaign).filter(load__lt=campaign.overlap_target)


def pending_assignment(judge):
    return judge.assignments.filter(judgment__isnull=True).select_related("pair").order_by("position").first()


def _next_training_pair(judge):
    seen = judge.assignments.filter(is_training=True).values("pair_id")
    return judge.campaign.training_pairs.exclude(pk__in=seen).first()


def _next_control_pair(judge, index):
    """The control pair due at this position of the judge's sequence, if any."""
    if index not in judge.control_positions:
        return None
    unseen = judge.campaign.control_pairs.exclude(pk__in=judge.assignments.values("pair_id"))
    return unseen.order_by("?").first()


def _next_real_pair(judge):
    campaign = judge.campaign
    if judge.assignments.filter(is_training=False, pair__is_control=False).count() >= campaign.pairs_per_judge:
        return None
    candidates = open_pairs(campaign).exclude(pk__in=judge.assignments.values("pair_id"))
    lowest = candidates.order_by("load").values_list("load", flat=True).first()
    if lowest is None:
        return None
    ties = list(candidates.filter(load=lowest).values_list("pk", flat=True)[:500])
    return Pair.objects.get(pk=random.choice(ties))


def _create_assignment(judge, pair, is_training):
    position = (judge.assignments.aggregate(last=Max("position"))["last"] or 0) + 1
    return Assignment.objects.create(
        judge=judge,
        pair=pair,
        position=position,
        is_training=is_training,
        top=random.choice(["source", "hypothesis"]),
    )


def next_assignment(judge):
    """The assignment the judge should answer now, creating it if needed; None when they are done."""
    with transaction.atomic():
        _lock_campaign(judge.campaign_id)
        if not Campaign.objects.filter(pk=judge.campaign_id, is_open=True).exists():
            return None
        current = pending_assignment(judge)
        if current is not None:
            return current
        training_pair = _next_training_pair(judge)
        if training_pair is not None:
            return _create_assignment(judge, training_pair, is_training=True)
        index = judge.assignments.filter(is_training=False).count() + 1
        control_pair = _next_control_pair(judge, index)
        if control_pair is not None:
            return _create_assignment(judge, control_pair, is_training=False)
        real_pair = _next_real_pair(judge)
        if real_pair is not None:
            return _create_assignment(judge, real_pair, is_training=False)
        return None


def mark_shown(assignment):
    """Remember when the pair was first displayed (timing starts there)."""
    if assignment.shown_at is None:
        Assignment.objects.filter(pk=assignment.pk, shown_at__isnull=True).update(shown_at=timezone.now())
        assignment.refresh_from_db(fields=["shown_at"])


def _response_ms(assignment, client_ms):
    if client_ms is not None and 0 < client_ms < MAX_PLAUSIBLE_RESPONSE_MS:
        return client_ms
    if assignment.shown_at is None:
        return None
    return int((timezone.now() - assignment.shown_at).total_seconds() * 1000)


def record_judgment(assignment, answer, client_ms=None):
    """Store the answer once; a repeated submission (double click, retry) changes nothing.

    The campaign's task type says how the answer is stored (for similarity: the label).
    Returns (judgment, created).
    """
    existing = Judgment.objects.filter(assignment=assignment).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            judgment = Judgment.objects.create(
                assignment=assignment,
                judge_id=assignment.judge_id,
                pair_id=assignment.pair_id,
                is_training=assignment.is_training,
                response_ms=_response_ms(assignment, client_ms),
                **task_type_of(assignment.judge.campaign).judgment_fields(answer),
            )
    except IntegrityError:
        # Another request for the same assignment won the race: keep its answer.
        return Judgment.objects.get(assignment=assignment), False
    return judgment, True


def judge_progress(judge):
    """Counts for the progress line: training answered, real answered, real planned."""
    answered = judge.judgments.aggregate(
        training=Count("pk", filter=Q(is_training=True)),
        real=Count("pk", filter=Q(is_training=False)),
    )
    return {
        "training_done": answered["training"],
        "training_total": judge.campaign.training_pairs.count(),
        "real_done": answered["real"],
        # Judges are not told which pairs are controls: they count in the total.
        "real_total": judge.campaign.pairs_per_judge + len(judge.control_positions),
    }
