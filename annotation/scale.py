"""The 5-way similarity scale's facts, in one place and free of Django.

The answer order, the paper's mapping to the binary class (paraphrase or not), the 4-point
ordinal used for rank correlations and the majority rule that turns votes into a pair's class. The Django
models, the exports and the pure analysis package all read them from here.
"""

import pandas as pd

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

# The binary class's two values, as tables name them (one spelling: "non_paraphrase"), and their titles.
PARAPHRASE, NON_PARAPHRASE = "paraphrase", "non_paraphrase"
PARAPHRASE_TITLES = {PARAPHRASE: "Paraphrase", NON_PARAPHRASE: "Non-paraphrase"}

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


def majority_paraphrase(paraphrase_votes: pd.Series, non_paraphrase_votes: pd.Series) -> pd.Series:
    """The binary majority per pair (Int64): Don't know casts no vote, a tie (or no vote) stays empty."""
    paraphrase = pd.Series(pd.NA, index=paraphrase_votes.index, dtype="Int64")
    paraphrase[paraphrase_votes > non_paraphrase_votes] = 1
    paraphrase[non_paraphrase_votes > paraphrase_votes] = 0
    return paraphrase
