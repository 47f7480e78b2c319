"""Training feedback: what a training pair expects and why, read from the pair's metadata.

A training pair carries, beside its sentences, `expected` (the answer or range the judge
should give, in the task type's own form) and `explanation` (one sentence of why), both
imported like any extra column (`campaigns.models.TRAINING_FEEDBACK_KEYS`). The task type
turns them into the feedback shown after each training answer and checks them on import.
"""

from campaigns.models import TRAINING_FEEDBACK_KEYS

EXPECTED, EXPLANATION = TRAINING_FEEDBACK_KEYS


def explanation_of(pair) -> str:
    value = pair.metadata.get(EXPLANATION)
    return value.strip() if isinstance(value, str) else ""


def check_training_rows(task_type, rows):
    """Refuse (ValueError naming the row) a training file whose expected answers the task type cannot read."""
    for row in rows:
        problem = task_type.training_problem(row.metadata)
        if problem is not None:
            raise ValueError(f"{row.location or 'a row'}: {problem}")
    return rows
