"""How a task type's answer counts as a human label: its vote on "is this a paraphrase?" and its rating.

Every task type declares one `Vote` (or none), in its own package; the human labels of the
report (`reports.analysis.labels`), adaptive overlap (`annotation.assignment`), the hidden
controls and the estimates all read a judgment's vote through it, never a type's stored answer.
The binary class's names and the majority rule are here too: they are every type's, not one
scale's. Plain Python and pandas, free of Django.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# The binary class's two values, as tables name them (one spelling: "non_paraphrase"), and their titles.
PARAPHRASE, NON_PARAPHRASE = "paraphrase", "non_paraphrase"
PARAPHRASE_TITLES = {PARAPHRASE: "Paraphrase", NON_PARAPHRASE: "Non-paraphrase"}

# The judgments frame's column holding each judgment's answer as its type's `Vote` reads it (the value at
# `Vote.key` of `Judgment.values`; None without a vote): what `vote_columns` maps.
ANSWER_COLUMN = "answer"
# The columns `vote_columns` adds to a judgments frame: the vote (1.0, 0.0, or NaN: no vote), whether the
# judge said they could not tell (a Don't know: counted apart from the answers that simply cast no vote),
# and the answer's rank on the type's rating scale (NaN without one).
VOTE_COLUMNS = ("vote", "abstained", "rating")


@dataclass(frozen=True)
class Vote:
    """Where a type keeps its answer in `Judgment.values`, and what each answer means for the paraphrase label and
    the rating."""

    # The key of `Judgment.values` holding the answer (every type stores its answers there).
    key: str
    # Each answer voting for a side: 1 (paraphrase) or 0 (non-paraphrase); an answer not named votes neither way.
    paraphrase: Mapping = field(default_factory=dict)
    # The answers saying "I cannot tell" (a Don't know): no vote, counted apart.
    abstain: tuple = ()
    # Each answer's rank on the type's rating scale (rank correlations, the systems' mean rating); None: none.
    rating: Mapping | None = None

    @property
    def lookup(self) -> str:
        """The answer's path from a `Judgment` in a database query (`values__answer`, `values__fluent`)."""
        return f"values__{self.key}"

    def answers_voting(self, side: int) -> list:
        """The answers voting for `side` (1: paraphrase, 0: non-paraphrase)."""
        return [answer for answer, vote in self.paraphrase.items() if vote == side]

    def answer_of(self, values):
        """One judgment's answer, from its stored `values` (None when it holds none)."""
        return values.get(self.key) if isinstance(values, dict) else None

    def vote_of(self, values):
        """One judgment's vote, from its stored `values`: 1, 0 or None."""
        return _lookup(self.paraphrase, self.answer_of(values))

    def answers(self, values) -> list:
        """The answer of each of the stored `values` (a column of a frame holding whole `values` documents)."""
        return [self.answer_of(one) for one in values]


def _lookup(mapping, answer):
    try:
        return mapping.get(answer)
    except TypeError:  # an unhashable answer (a list in JSON) is no answer of the mapping
        return None


def vote_columns(judgments: pd.DataFrame, vote: Vote | None) -> pd.DataFrame:
    """`VOTE_COLUMNS` for each judgment of `judgments` (on its index), mapping its `ANSWER_COLUMN` under `vote`
    (None: no vote, no rating; the frame then needs no answer column)."""
    if vote is None or judgments.empty:
        n = len(judgments)
        return pd.DataFrame(
            {"vote": np.full(n, np.nan), "abstained": np.zeros(n, dtype=bool), "rating": np.full(n, np.nan)},
            index=judgments.index,
        )
    answers = judgments[ANSWER_COLUMN]
    rating = _mapped(answers, vote.rating) if vote.rating is not None else np.nan
    return pd.DataFrame(
        {
            "vote": _mapped(answers, vote.paraphrase),
            "abstained": _mapped(answers, dict.fromkeys(vote.abstain, 1.0)).eq(1.0),
            "rating": pd.Series(rating, index=judgments.index, dtype=float),
        },
        index=judgments.index,
    )


def _mapped(answers: pd.Series, mapping) -> pd.Series:
    """Each answer's value in `mapping` as floats (NaN: not in it), fast for the hashable answers of a column."""
    try:
        return answers.map(dict(mapping)).astype(float)
    except TypeError:  # an unhashable answer (a list in JSON) is in no mapping
        return answers.map(lambda answer: _lookup(mapping, answer)).astype(float)


def with_votes(judgments: pd.DataFrame, vote: Vote | None) -> pd.DataFrame:
    """`judgments` with `VOTE_COLUMNS` (replacing any it has) as `vote` reads its `ANSWER_COLUMN`."""
    return judgments.drop(columns=list(VOTE_COLUMNS), errors="ignore").join(vote_columns(judgments, vote))


def majority_paraphrase(paraphrase_votes: pd.Series, non_paraphrase_votes: pd.Series) -> pd.Series:
    """The binary majority per pair (Int64): an answer without a vote counts for neither; a tie stays empty."""
    paraphrase = pd.Series(pd.NA, index=paraphrase_votes.index, dtype="Int64")
    paraphrase[paraphrase_votes > non_paraphrase_votes] = 1
    paraphrase[non_paraphrase_votes > paraphrase_votes] = 0
    return paraphrase
