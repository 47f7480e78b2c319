"""Training feedback: what a training pair expects and why, read from the pair's metadata.

A training pair carries, beside its sentences, `expected` (the answer or range the judge
should give, in the task type's own form) and `explanation` (one sentence of why), both
imported like any extra column (`campaigns.models.TRAINING_FEEDBACK_KEYS`). The task type
turns them into the feedback shown after each training answer and checks them on import.
"""

import json

from campaigns.models import TRAINING_FEEDBACK_KEYS

from .scale import ANSWERS, PARAPHRASE_OF_ANSWER
from .tasktypes.criteria.scale import CRITERIA, RATINGS

EXPECTED, EXPLANATION = TRAINING_FEEDBACK_KEYS


def explanation_of(pair) -> str:
    value = pair.metadata.get(EXPLANATION)
    return value.strip() if isinstance(value, str) else ""


def parse_expected_answers(value) -> list[str]:
    """5-way answer names, as a list or as text separated by "|" or ","; ValueError names a bad one."""
    if isinstance(value, str):
        value = [part for chunk in value.split("|") for part in chunk.split(",")]
    if not isinstance(value, list) or not value:
        raise ValueError("expected must name one or more answers, e.g. mostly_similar|same_meaning")
    answers = [str(item).strip() for item in value if str(item).strip()]
    unknown = [answer for answer in answers if answer not in ANSWERS]
    if unknown or not answers:
        shown = unknown[0] if unknown else ""
        raise ValueError(f"expected names an unknown answer {shown!r}; answers: {', '.join(ANSWERS)}")
    return [answer for answer in ANSWERS if answer in answers]


def expected_answers(pair) -> list[str]:
    """The 5-way answers a training pair accepts: its `expected`, else those voting for its gold label."""
    value = pair.metadata.get(EXPECTED)
    if value:
        return parse_expected_answers(value)
    if pair.gold_label is None:
        return []
    return [answer for answer, vote in PARAPHRASE_OF_ANSWER.items() if vote == pair.gold_label]


def parse_expected_ranges(value) -> dict[str, tuple[int, int]]:
    """Per criterion, the (lowest, highest) rating expected: {"adequacy": [4, 5], "fluency": 5, "overall": "3-4"}.

    A CSV cell holds the same object as JSON text. ValueError names the first problem.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = None
    if not isinstance(value, dict) or not value:
        raise ValueError('expected must be an object of criteria and ratings, e.g. {"adequacy": [4, 5], "fluency": 5}')
    ranges = {}
    for criterion, rating in value.items():
        if criterion not in CRITERIA:
            raise ValueError(f"expected names an unknown criterion {criterion!r}; criteria: {', '.join(CRITERIA)}")
        ranges[criterion] = _rating_range(criterion, rating)
    return {criterion: ranges[criterion] for criterion in CRITERIA if criterion in ranges}


def _rating_range(criterion, rating):
    if isinstance(rating, str) and "-" in rating:
        rating = rating.split("-", 1)
    bounds = rating if isinstance(rating, list) else [rating]
    if any(isinstance(bound, bool | float) for bound in bounds):
        bounds = []
    try:
        numbers = [int(bound) for bound in bounds]
    except (TypeError, ValueError):
        numbers = []
    if len(numbers) not in (1, 2) or any(number not in RATINGS for number in numbers):
        raise ValueError(f"expected {criterion}: give a rating from 1 to 5 or a range such as [4, 5]")
    return min(numbers), max(numbers)


def check_training_rows(task_type, rows):
    """Refuse (ValueError naming the row) a training file whose expected answers the task type cannot read."""
    for row in rows:
        problem = task_type.training_problem(row.metadata)
        if problem is not None:
            raise ValueError(f"{row.location or 'a row'}: {problem}")
    return rows
