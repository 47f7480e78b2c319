"""Admitting a judge to a campaign: availability, crowd-platform ids, rate limit, set-up."""

import hashlib
import hmac
import math
from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone

from campaigns.models import TRAINING_TRIAL_SIZE
from parasol.net import client_address

from . import assignment as assign
from .controls import controls_planned, ensure_control_pairs, plan_control_positions, protocol_of
from .models import Judge
from .stats import answer_seconds

# Judge field <- its own name (the consent form's hidden field), then link
# parameters: Prolific's names first, then generic ones.
CROWD_PARAMETERS = {
    "crowd_participant": ("crowd_participant", "PROLIFIC_PID", "participant"),
    "crowd_study": ("crowd_study", "STUDY_ID", "study"),
    "crowd_session": ("crowd_session", "SESSION_ID", "session"),
}


def crowd_ids(params):
    """The crowd-platform ids found in a query string or form, trimmed to their field size."""
    found = {}
    for field, names in CROWD_PARAMETERS.items():
        value = next((params.get(name) for name in names if params.get(name)), "")
        found[field] = value.strip()[:100]
    return found


def returning_judge(campaign, token=None):
    """A judge of this campaign coming back with their own secret (the cookie), else None.

    A crowd participant id is never enough: a third party can know it, so it is
    only ever recorded on a new judge, and a known id answers like an unknown one.
    """
    if not token:
        return None
    return Judge.objects.filter(token=token, campaign=campaign).first()


class Unavailable(models.TextChoices):
    """Why a judge cannot (go on) answering; `annotation/unavailable.html` words each for the judge."""

    CLOSED = "closed", "The campaign is closed"
    FULL = "full", "The campaign has all the judges it wants"
    EXHAUSTED = "exhausted", "Every pair has all the answers it needs"
    OPENING = "opening", "Active choice: the next wave of pairs is not drawn yet"
    BUSY = "busy", "Too many joins from one network in the last hour"


def why_unavailable(campaign):
    """None when a new judge can start, else the reason shown to them."""
    if not campaign.is_open:
        return Unavailable.CLOSED
    max_judges = protocol_of(campaign).max_judges
    if max_judges is not None and seated_judges(campaign).count() >= max_judges:
        return Unavailable.FULL
    if not assign.open_pairs(campaign).exists():
        return Unavailable.OPENING if campaign.awaits_active_draw else Unavailable.EXHAUSTED
    return None


def what_to_expect(campaign):
    """What the welcome page promises: training pairs, then at most the pairs the progress line will count
    (hidden controls included, unnamed), and the minutes that takes at a time per pair a judge can trust
    (`annotation.stats.answer_seconds`: `time_from` says where it comes from)."""
    training = campaign.training_pairs.count() or TRAINING_TRIAL_SIZE
    real = assign.open_pairs(campaign)[: campaign.pairs_per_judge].count()
    pairs = real + (controls_planned(campaign) if real else 0)
    seconds, time_from = answer_seconds(campaign)
    minutes = max(1, math.ceil((training + pairs) * seconds / 60))
    return {"training": training, "pairs": pairs, "minutes": minutes, "time_from": time_from}


def seated_judges(campaign):
    """Judges who count towards the campaign's cap: those who answered, or joined a short while ago."""
    idle_since = timezone.now() - timedelta(minutes=settings.PARASOL_IDLE_RESERVATION_MINUTES)
    return campaign.judges.filter(Q(judgments__isnull=False) | Q(created_at__gte=idle_since)).distinct()


def join_key(request):
    """A keyed hash of the client's address: enough to count joins, useless to identify anyone.

    Behind a declared proxy the address comes from its header, so judges are not all
    counted as the proxy's one address.
    """
    address = client_address(request)
    return hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256).hexdigest()[:32]


def joins_exceeded(campaign, key):
    since = timezone.now() - timedelta(hours=1)
    recent = Judge.objects.filter(campaign=campaign, join_key=key, created_at__gte=since).count()
    return recent >= settings.PARASOL_JOINS_PER_HOUR


def join(campaign, *, key, crowd):
    """Create the judge with their training trial laid out and their first real pairs reserved.

    Returns None, creating nothing, when no real pair is left for a new judge: better
    told now than after the training.
    """
    with transaction.atomic():
        campaign.ensure_training_pairs()
        ensure_control_pairs(campaign)
        judge = Judge.objects.create(
            campaign=campaign,
            consented_at=timezone.now(),
            join_key=key,
            control_positions=plan_control_positions(campaign),
            **crowd,
        )
        if assign.reserve_before_training(judge) == 0:
            transaction.set_rollback(True)
            return None
        return judge
