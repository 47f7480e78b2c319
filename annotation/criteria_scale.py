"""PEM's multi-criteria scale's facts, in one place and free of Django (after Liu et al., PEM, section 3).

Four criteria, each rated 1 to 5; the expected ratings of PEM's control (the source
itself as its hypothesis); the answer storage key of each criterion in `Judgment.values`.
"""

CRITERIA = ["adequacy", "fluency", "dissimilarity", "overall"]
RATINGS = [1, 2, 3, 4, 5]
# The source as its own hypothesis: meaning kept, fluent, no wording changed (PEM, section 5.1).
# PEM also fixes its overall score at 2; a judge may fairly give 1 or 3 to an unchanged
# sentence, so Overall is not checked.
CONTROL_EXPECTED = {"adequacy": 5, "fluency": 5, "dissimilarity": 1}
# A control is passed when every checked rating is within this distance of the expected one.
CONTROL_TOLERANCE = 1


def control_passed(values, expected=CONTROL_EXPECTED) -> bool:
    """Whether a judge's ratings of a source-as-hypothesis control are within tolerance of the expected ones."""
    try:
        return all(abs(int(values[name]) - rating) <= CONTROL_TOLERANCE for name, rating in expected.items())
    except (KeyError, TypeError, ValueError):
        return False
