"""Campaign progress figures for the researcher's dashboard, and the measured time per answer."""

import statistics

from django.db.models import Count, Q

from campaigns.task_types import task_type_of

from .assignment import settled_early
from .models import EnglishLevel, Judge, Judgment
from .reliability import MIN_MEDIAN_RESPONSE_MS, campaign_reliability


def adaptive_savings(campaign):
    """With adaptive overlap: pairs that stopped at their first judges, and the judgments that saved
    compared with asking every pair's maximum. None when the campaign does not use it."""
    if not campaign.adaptive_overlap:
        return None
    answered = list(settled_early(campaign).values_list("answered", flat=True))
    return {"n_pairs": len(answered), "n_saved": sum(campaign.overlap_max - n for n in answered)}


def campaign_progress(campaign):
    """Judges, judgments and coverage of one campaign; training, controls and excluded judges are left out."""
    judgments = Judgment.objects.filter(pair__campaign=campaign).counted()
    judges = Judge.objects.filter(campaign=campaign)
    by_level = dict(judges.exclude(english_level="").values_list("english_level").annotate(n=Count("pk")).order_by())
    per_pair = list(
        campaign.real_pairs.annotate(
            n=Count("judgments", filter=Q(judgments__is_training=False, judgments__judge__excluded=False))
        ).values_list("n", flat=True)
    )
    n_pairs = len(per_pair)
    n_complete = sum(1 for n in per_pair if n >= campaign.overlap_target)
    return {
        "n_pairs": n_pairs,
        "n_judges": judges.count(),
        "n_judges_finished": judges.filter(finished_at__isnull=False).count(),
        "n_judgments": judgments.count(),
        "n_pairs_complete": n_complete,
        "n_pairs_started": sum(1 for n in per_pair if n > 0),
        "percent_complete": round(100 * n_complete / n_pairs) if n_pairs else 0,
        # The answers' tables as the campaign's task type reads them (5-way counts, criteria means, spans).
        "answers": task_type_of(campaign).dashboard(judgments),
        "levels": [(level.label, by_level.get(level.value, 0)) for level in EnglishLevel],
        "adaptive": adaptive_savings(campaign),
    }


# A median is believed over the protocol's estimate once this many timed answers exist;
# the latest TIMED_ANSWERS_SAMPLE of them are read, so the query stays bounded.
MIN_TIMED_ANSWERS = 30
TIMED_ANSWERS_SAMPLE = 2000
# Other campaigns' answers are not checked judge by judge: the time they give per pair is
# never believed below this share of the protocol's estimate.
TYPE_FLOOR_SHARE = 0.5


def answer_seconds(campaign):
    """(seconds per answer, where from): the time a judge can trust, for the welcome page's promise.

    In order: the median real answer of this campaign's trusted judges (neither excluded nor
    flagged by `annotation.reliability`); else the median of the task type's answers in every
    campaign from unexcluded judges whose own median is not robot-fast, floored at
    TYPE_FLOOR_SHARE of the protocol's estimate; else the protocol's estimate
    (`default_answer_seconds`). Each needs MIN_TIMED_ANSWERS timed answers.
    """
    task_type = task_type_of(campaign)
    estimate = float(task_type.default_answer_seconds)
    timed = Judgment.objects.filter(is_training=False, response_ms__isnull=False).order_by("-pk")
    trusted = timed.filter(judge__in=trusted_judges(campaign))
    times = list(trusted.values_list("response_ms", flat=True)[:TIMED_ANSWERS_SAMPLE])
    if len(times) >= MIN_TIMED_ANSWERS:
        return statistics.median(times) / 1000, "campaign"
    of_type = timed.filter(pair__campaign__task_type=task_type.name, judge__excluded=False)
    times = _without_fast_judges(of_type.values_list("judge_id", "response_ms")[:TIMED_ANSWERS_SAMPLE])
    if len(times) >= MIN_TIMED_ANSWERS:
        return max(statistics.median(times) / 1000, TYPE_FLOOR_SHARE * estimate), "task type"
    return estimate, "protocol"


def trusted_judges(campaign):
    """The campaign's judges whose answers count as a person's: not excluded, not flagged."""
    table = campaign_reliability(campaign)
    return [
        judge.pk
        for judge, flagged in zip(table["judge"], table["flagged"], strict=True)
        if not flagged and not judge.excluded
    ]


def _without_fast_judges(rows):
    """The answer times of judges whose median answer is not under the reliability's speed flag."""
    by_judge = {}
    for judge, ms in rows:
        by_judge.setdefault(judge, []).append(ms)
    return [ms for times in by_judge.values() if statistics.median(times) >= MIN_MEDIAN_RESPONSE_MS for ms in times]
