"""The 5-way similarity scale's facts, in one place and free of Django.

The answer order, the paper's mapping to the binary class (paraphrase or not) and the 4-point
ordinal used for rank correlations, declared as the type's `Vote` (`VOTE`): the human labels,
adaptive overlap and the controls read the answers through it. The Django models, the exports
and the 5-way tables of the report read the answers' names and titles from here.
"""

from annotation.votes import Vote

# Where a judgment keeps its 5-way answer: `Judgment.values["answer"]` (the judge form's field has the same name).
# The judgments export and the REST API publish it as `label`, their first name for it.
ANSWER_KEY = "answer"
# The five answers, in the order the protocol shows them.
ANSWERS = ["very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know"]
DONT_KNOW = "dont_know"


def gettext_noop(text):
    """Marks a string for `makemessages` (which looks for this name) without importing Django."""
    return text


# The answers' titles, as the judge and the report's reader see them (the judge page translates them).
ANSWER_TITLES = {
    "very_different": gettext_noop("Very different"),
    "slightly_similar": gettext_noop("Slightly similar"),
    "mostly_similar": gettext_noop("Mostly similar"),
    "same_meaning": gettext_noop("Same meaning"),
    "dont_know": gettext_noop("Don't know"),
}

# The paper's mapping to the binary class; Don't know is indeterminate (None).
PARAPHRASE_OF_ANSWER = {
    "very_different": 0,
    "slightly_similar": 0,
    "mostly_similar": 1,
    "same_meaning": 1,
    "dont_know": None,
}

# The 4-point ordinal scale used for rank correlations; Don't know has no rank.
ORDINAL_OF_ANSWER = {
    "very_different": 1,
    "slightly_similar": 2,
    "mostly_similar": 3,
    "same_meaning": 4,
    "dont_know": None,
}


# How a 5-way answer (stored in `Judgment.values["answer"]`) counts as a human label: the paper's binary
# mapping (Don't know casts no vote, counted apart) and the 4-point ordinal as its rating.
VOTE = Vote(key=ANSWER_KEY, paraphrase=PARAPHRASE_OF_ANSWER, abstain=(DONT_KNOW,), rating=ORDINAL_OF_ANSWER)
