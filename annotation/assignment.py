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
from campaigns.task_types import task_type_of

from .models import Assignment, Judgment, Step

# A client-side timing beyond a day is not a measurement; fall back to the server's.
MAX_PLAUSIBLE_RESPONSE_MS = 24 * 3600 * 1000


def _lock_campaign(campaign_id):
    Campaign.objects.filter(pk=campaign_id).update(assignment_seq=F("assignment_seq") + 1)


def _votes(campaign):
    """With adaptive overlap on a task type that declares a vote (`TaskType.vote`): that declaration (for
    similarity, the scale's mapping: Don't know votes neither way); else None."""
    if not campaign.adaptive_overlap:
        return None
    return task_type_of(campaign).vote


def _reservation_windows():
    """(since when an idle judge's reservations count, since when a working judge's do)."""
    now = timezone.now()
    idle = now - timedelta(minutes=settings.PARASOL_IDLE_RESERVATION_MINUTES)
    return idle, now - timedelta(minutes=settings.PARASOL_ASSIGNMENT_RESERVATION_MINUTES)


def still_reserved(assignment) -> bool:
    """Whether an unanswered assignment still counts in its pair's load (the rule of `pairs_with_load`)."""
    idle_since, reserved_since = _reservation_windows()
    if assignment.assigned_at >= idle_since:
        return True
    working = Judgment.objects.filter(judge_id=assignment.judge_id, is_training=False).exists()
    return working and assignment.assigned_at >= reserved_since


def _counts_in_load(assignment) -> bool:
    return not assignment.is_training and not assignment.pair.is_control


class PairGivenAway(Exception):
    """The judge's reservation of a pair lapsed and the pair reached its target meanwhile: their answer would
    push it past the target, so it is not stored (the view says so and shows the judge their next pair)."""


def _release_if_given_away(assignment) -> bool:
    """Call with the campaign locked. A lapsed reservation is taken again while the pair still wants a judgment
    (counted from now), or released (deleted: it holds no answer) when others filled the pair; True if released."""
    if assignment.is_training or not _counts_in_load(assignment) or still_reserved(assignment):
        return False
    if open_pairs(assignment.judge.campaign).filter(pk=assignment.pair_id).exists():
        Assignment.objects.filter(pk=assignment.pk).update(assigned_at=timezone.now())
        assignment.refresh_from_db(fields=["assigned_at"])
        return False
    assignment.delete()
    return True


def pairs_with_load(campaign):
    """Real pairs annotated with `load`: judgments given plus assignments still reserved.

    A judge who has answered no real pair yet holds reservations only for the short
    idle period (their first real pairs, reserved before training, included): otherwise
    a few idle joiners could keep a small campaign "full".
    With adaptive overlap, also `answered` and the binary votes `paraphrase` and `non_paraphrase`.
    """
    idle_since, reserved_since = _reservation_windows()
    working = campaign.judges.filter(judgments__is_training=False).values("pk")
    counts = (
        Q(assignments__judgment__isnull=False)
        | Q(assignments__assigned_at__gte=idle_since)
        | Q(assignments__assigned_at__gte=reserved_since, assignments__judge_id__in=working)
    )
    pairs = campaign.real_pairs.annotate(load=Count("assignments", filter=counts))
    vote = _votes(campaign)
    if vote is not None:
        voted = f"assignments__judgment__{vote.lookup}__in"
        pairs = pairs.annotate(
            answered=Count("assignments", filter=Q(assignments__judgment__isnull=False)),
            paraphrase=Count("assignments", filter=Q(**{voted: vote.answers_voting(1)})),
            non_paraphrase=Count("assignments", filter=Q(**{voted: vote.answers_voting(0)})),
        )
    return pairs


def _first_judges_agree():
    """Every answer so far gave the same binary label (a Don't know is no agreement)."""
    return Q(paraphrase=F("answered")) | Q(non_paraphrase=F("answered"))


def open_pairs(campaign):
    """Pairs that still need judgments.

    A pair wants `overlap_target` judgments; with adaptive overlap, a pair whose first
    judges did not all agree wants more, up to `overlap_max`. With active choice, only the
    pairs drawn for judging (none before the draw: the estimates need every judged pair drawn);
    without, never a pair a generation run's selection held back (`generation.selection`).
    """
    wanted = Q(load__lt=campaign.overlap_target)
    if _votes(campaign) is not None:
        disputed = Q(answered__gte=campaign.overlap_target) & ~_first_judges_agree()
        wanted |= Q(load__lt=campaign.overlap_max) & disputed
    # A pair left out of a draw (active choice, or a generation run's selection stage) is never handed out.
    drawn = Q(chosen=True) if campaign.active_choice else ~Q(chosen=False)
    return pairs_with_load(campaign).filter(wanted & drawn)


def settled_early(campaign):
    """With adaptive overlap: pairs whose first judges all agreed, so they stopped there."""
    if _votes(campaign) is None:
        return campaign.real_pairs.none()
    return pairs_with_load(campaign).filter(_first_judges_agree(), answered__gte=campaign.overlap_target)


def pending_assignment(judge):
    return judge.assignments.filter(judgment__isnull=True).select_related("pair").order_by("position").first()


def is_on_show(judge, assignment):
    """Whether the judge may answer `assignment` now: it is the pair on show to them (their first
    unanswered assignment, already displayed) and of their current phase (training until the trial is answered).

    A pair never displayed was never timed, and one further down the sequence skips what comes before it.
    """
    current = pending_assignment(judge)
    return (
        current is not None
        and current.pk == assignment.pk
        and current.shown_at is not None
        and current.is_training == (judge.step == Step.TRAINING)
    )


def _next_training_pair(judge):
    seen = judge.assignments.filter(is_training=True).values("pair_id")
    return judge.campaign.training_pairs.exclude(pk__in=seen).first()


def _next_control_pair(judge, index):
    """The control pair due at this position of the judge's sequence, if any."""
    if index not in judge.control_positions:
        return None
    unseen = judge.campaign.check_pairs.exclude(pk__in=judge.assignments.values("pair_id"))
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
        top=_top_side(judge.campaign),
        choice_probability=None if is_training else pair.choice_probability,
    )


def _top_side(campaign):
    """The sentence shown on top: random where the protocol is symmetric, the source where questions name roles."""
    return "source" if task_type_of(campaign).source_first else random.choice(["source", "hypothesis"])


def _assign_new(judge):
    """Create the judge's next assignment (training, then controls and real pairs); None when none is left.

    Call with the campaign locked.
    """
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


def next_assignment(judge):
    """The assignment the judge should answer now, creating it if needed; None when they are done."""
    with transaction.atomic():
        _lock_campaign(judge.campaign_id)
        if not Campaign.objects.filter(pk=judge.campaign_id, is_open=True).exists():
            return None
        current = pending_assignment(judge)
        while current is not None and _release_if_given_away(current):  # given to others while they were away
            current = pending_assignment(judge)
        if current is not None:
            return current
        return _assign_new(judge)


def reserve_before_training(judge, wanted=None):
    """Lay out a new judge's training trial and reserve their first real pairs; returns how many were reserved.

    Training is only worth a judge's time if real pairs wait at the end of it, so
    they are taken now, in the judge's own sequence after the training pairs (with
    any control items due there). They are ordinary pending assignments: they
    expire like any other reservation if the judge walks away.
    """
    campaign = judge.campaign
    wanted = min(wanted or settings.PARASOL_PAIRS_RESERVED_BEFORE_TRAINING, campaign.pairs_per_judge)
    reserved = 0
    with transaction.atomic():
        _lock_campaign(campaign.pk)
        while reserved < wanted:
            created = _assign_new(judge)
            if created is None:
                break
            if not created.is_training and not created.pair.is_control:
                reserved += 1
    return reserved


def mark_shown(assignment):
    """Remember when the pair was first displayed (timing starts there)."""
    if assignment.shown_at is None:
        Assignment.objects.filter(pk=assignment.pk, shown_at__isnull=True).update(shown_at=timezone.now())
        assignment.refresh_from_db(fields=["shown_at"])


def _response_ms(assignment, client_ms):
    """The smaller of the browser's timing and the server's: a client cannot claim to have read longer.

    The server's clock (shown to answered) includes network time, so it is an upper bound;
    the browser's is finer but forgeable, so it is believed only below that bound.
    """
    server_ms = None
    if assignment.shown_at is not None:
        server_ms = max(0, int((timezone.now() - assignment.shown_at).total_seconds() * 1000))
    if client_ms is not None and 0 < client_ms < MAX_PLAUSIBLE_RESPONSE_MS:
        return client_ms if server_ms is None else min(client_ms, server_ms)
    return server_ms


def answering_too_fast(judge):
    """Whether the judge already gave the most answers allowed in the last minute (a flood, not reading)."""
    since = timezone.now() - timedelta(minutes=1)
    return judge.judgments.filter(created_at__gte=since).count() >= settings.PARASOL_MAX_ANSWERS_PER_MINUTE


def record_judgment(assignment, answer, client_ms=None):
    """Store the answer once; a repeated submission (double click, retry) changes nothing.

    `answer` is the task type's (`TaskType.answer`): the JSON object stored in `Judgment.values`.
    Returns (judgment, created). A real pair's answer is stored under the campaign's lock, so no pair
    passes its overlap target: an answer on a reservation that lapsed counts while the pair still wants
    a judgment; once other judges filled it, `PairGivenAway` is raised and nothing is stored.
    """
    existing = Judgment.objects.filter(assignment=assignment).first()
    if existing is not None:
        return existing, False
    released = False
    try:
        with transaction.atomic():
            if _counts_in_load(assignment):
                _lock_campaign(assignment.judge.campaign_id)
                existing = Judgment.objects.filter(assignment=assignment).first()
                if existing is not None:
                    return existing, False
                # As it is now, under the lock: another request may have released it, or it may have lapsed.
                assignment = (
                    Assignment.objects.select_related("pair", "judge__campaign").filter(pk=assignment.pk).first()
                )
                released = assignment is None or _release_if_given_away(assignment)
            if not released:
                judgment = Judgment.objects.create(
                    assignment=assignment,
                    judge_id=assignment.judge_id,
                    pair_id=assignment.pair_id,
                    is_training=assignment.is_training,
                    response_ms=_response_ms(assignment, client_ms),
                    values=answer,
                )
    except IntegrityError:
        # Another request for the same assignment won the race: keep its answer.
        return Judgment.objects.get(assignment=assignment), False
    if released:  # the release is committed: the judge's next pair is another
        raise PairGivenAway()
    return judgment, True


def planned_length(control_positions, real_count):
    """How many items the real-pair phase holds: controls fall at their positions, and the phase ends
    at the first position with neither a control nor a real pair left."""
    length, reals_left = 0, real_count
    while True:
        if length + 1 in control_positions:
            length += 1
        elif reals_left > 0:
            length, reals_left = length + 1, reals_left - 1
        else:
            return length


def judge_progress(judge):
    """Counts for the progress line: training answered and planned, real answered and really to come.

    The real total is what the judge will actually get: their plan, capped by the
    real pairs they already hold plus those still open to them, so it shrinks if the
    campaign runs dry. Judges are not told which pairs are controls: they count in it.
    """
    campaign = judge.campaign
    answered = judge.judgments.aggregate(
        training=Count("pk", filter=Q(is_training=True)),
        real=Count("pk", filter=Q(is_training=False)),
    )
    seen = judge.assignments.values("pair_id")
    held = judge.assignments.filter(is_training=False, pair__is_control=False).count()
    missing = max(0, campaign.pairs_per_judge - held)
    still_open = open_pairs(campaign).exclude(pk__in=seen)[:missing].count() if missing else 0
    real_pairs = held + still_open
    return {
        "training_done": answered["training"],
        "training_total": campaign.training_pairs.count(),
        "real_done": answered["real"],
        "real_total": max(answered["real"], planned_length(set(judge.control_positions), real_pairs)),
        "real_planned": campaign.pairs_per_judge + len(judge.control_positions),
    }
