"""Campaign progress figures for the researcher's dashboard, and the measured time per answer."""

import statistics

from django.db.models import Count, Q

from .assignment import settled_early
from .models import EnglishLevel, Judge, Judgment
from .tasktypes.registry import task_type_of


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


# A median is believed over the task type's default once this many timed answers exist;
# the latest TIMED_ANSWERS_SAMPLE of them are read, so the query stays bounded.
MIN_TIMED_ANSWERS = 30
TIMED_ANSWERS_SAMPLE = 2000


def answer_seconds(task_type):
    """(seconds per answer, measured?): the median time of this task type's stored real answers, across
    campaigns; the task type's documented default while fewer than MIN_TIMED_ANSWERS are timed."""
    times = list(
        Judgment.objects.filter(pair__campaign__task_type=task_type.name, is_training=False, response_ms__isnull=False)
        .order_by("-pk")
        .values_list("response_ms", flat=True)[:TIMED_ANSWERS_SAMPLE]
    )
    if len(times) < MIN_TIMED_ANSWERS:
        return float(task_type.default_answer_seconds), False
    return statistics.median(times) / 1000, True
