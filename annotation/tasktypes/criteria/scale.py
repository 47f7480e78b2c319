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
# PEM's three artificial systems (section 5.1) and their fixed "human" ratings: the source itself,
# a random sentence of the same corpus, a sentence drawn from the corpus's unigram language model.
PEM_CONTROLS = {
    "pem-source": {"adequacy": 5, "fluency": 5, "dissimilarity": 1, "overall": 2},
    "pem-random": {"adequacy": 1, "fluency": 5, "dissimilarity": 5, "overall": 1},
    "pem-unigram": {"adequacy": 1, "fluency": 1, "dissimilarity": 5, "overall": 1},
}
PEM_CONTROL_SYSTEMS = {
    "pem-source": "control: source itself",
    "pem-random": "control: random sentence",
    "pem-unigram": "control: unigram LM",
}
# A control is passed when every checked rating is within this distance of the expected one.
CONTROL_TOLERANCE = 1


def control_passed(values, expected=CONTROL_EXPECTED) -> bool:
    """Whether a judge's ratings of a source-as-hypothesis control are within tolerance of the expected ones."""
    try:
        return all(abs(int(values[name]) - rating) <= CONTROL_TOLERANCE for name, rating in expected.items())
    except (KeyError, TypeError, ValueError):
        return False
