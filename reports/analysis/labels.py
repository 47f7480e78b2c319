"""Labels of pairs: the judges' majority or the gold label, and the 5-way answer distribution.

The judges' labels are read from the judgments' vote columns (`annotation.votes.VOTE_COLUMNS`: `vote`,
`abstained`, `rating`), which the task type's `Vote` declaration fills in (`reports.frames.load_frames`,
or `annotation.votes.with_votes`): whatever the type, its answers become human labels the same way.
The majority rule is `annotation.votes.majority_paraphrase`; only the 5-way answer distribution reads
the similarity scale's answers.
"""

import numpy as np
import pandas as pd

from annotation.tasktypes.similarity.scale import ANSWERS, PARAPHRASE_OF_ANSWER
from annotation.votes import NON_PARAPHRASE, PARAPHRASE, majority_paraphrase

GLOBAL = "Global"
CLASS_NAMES = {1: PARAPHRASE, 0: NON_PARAPHRASE}
LABEL_SOURCES = ("human", "gold")


def human_labels(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per pair (index `pair_id`): vote counts, the majority binary label, whether it is a tie, mean rating.

    `judgments` carries the vote columns (`annotation.votes.VOTE_COLUMNS`). An answer without a vote
    (a Don't know, counted in `n_dont_know`) casts none; a tie between paraphrase and non-paraphrase
    votes leaves `human_label` empty and sets `is_tie`. `mean_ordinal` is the mean of the type's rating.
    """
    columns = ["n_judgments", "n_paraphrase_votes", "n_non_paraphrase_votes", "n_dont_know", "mean_ordinal"]
    if judgments.empty:
        frame = pd.DataFrame(columns=columns, index=pd.Index([], name="pair_id"), dtype=float)
        frame["human_label"] = pd.Series(dtype="Int64")
        frame["is_tie"] = pd.Series(dtype=bool)
        return frame
    vote = judgments["vote"]
    work = pd.DataFrame(
        {
            "pair_id": judgments["pair_id"].astype(str).to_numpy(),
            "p": (vote == 1).to_numpy(),
            "np": (vote == 0).to_numpy(),
            "dk": judgments["abstained"].astype(bool).to_numpy(),
            "ordinal": judgments["rating"].astype(float).to_numpy(),
        }
    )
    grouped = work.groupby("pair_id", sort=False)
    frame = pd.DataFrame(
        {
            "n_judgments": grouped.size(),
            "n_paraphrase_votes": grouped["p"].sum(),
            "n_non_paraphrase_votes": grouped["np"].sum(),
            "n_dont_know": grouped["dk"].sum(),
            "mean_ordinal": grouped["ordinal"].mean(),
        }
    )
    p, n = frame["n_paraphrase_votes"], frame["n_non_paraphrase_votes"]
    frame["human_label"] = majority_paraphrase(p, n)
    frame["is_tie"] = (p == n) & (p > 0)
    return frame


def judge_votes(judgments: pd.DataFrame) -> pd.DataFrame:
    """Each judge's binary vote per pair: `pair_id`, `judge`, `vote` (int 1 or 0), from the vote columns.

    The judgments without a vote (a Don't know, a type that declares none) are left out: the input of
    label sources that weigh each judge (a crowd model) as the majority weighs them all alike.
    """
    voted = judgments[judgments["vote"].notna()] if len(judgments) else judgments.iloc[:0]
    return pd.DataFrame(
        {
            "pair_id": voted["pair_id"].astype(str).to_numpy(),
            "judge": voted["judge"].to_numpy(),
            "vote": voted["vote"].to_numpy(dtype="int64") if len(voted) else np.array([], dtype="int64"),
        }
    )


def attach_labels(pairs: pd.DataFrame, judgments: pd.DataFrame, label_source: str) -> tuple[pd.DataFrame, list[str]]:
    """`pairs` with vote columns, `mean_ordinal` and `paraphrase` (Int64 0/1, empty: unlabelled) from `label_source`."""
    if label_source not in LABEL_SOURCES:
        raise ValueError(f"label_source must be one of {LABEL_SOURCES}, got {label_source!r}")
    notes = []
    votes = human_labels(judgments)
    frame = pairs.copy(deep=False)  # copy-on-write: the pairs' columns are shared, never written through
    frame["pair_id"] = frame["pair_id"].astype(str)
    frame = frame.join(votes, on="pair_id")
    for column in ("n_judgments", "n_paraphrase_votes", "n_non_paraphrase_votes", "n_dont_know"):
        frame[column] = frame[column].fillna(0).astype("int64")
    frame["is_tie"] = frame["is_tie"].fillna(False).astype(bool)
    if label_source == "human":
        frame["paraphrase"] = frame["human_label"].astype("Int64")
        n_ties = int(frame["is_tie"].sum())
        if n_ties:
            notes.append(
                f"{n_ties} pair(s) have as many paraphrase as non-paraphrase votes; ties are left unlabelled "
                "and excluded from every statistic."
            )
        n_unjudged = int((frame["n_judgments"] == 0).sum())
        if n_unjudged:
            notes.append(f"{n_unjudged} pair(s) have no judgment yet.")
    else:
        frame["paraphrase"] = pd.array(frame["gold_label"], dtype="Int64")
        n_missing = int(frame["paraphrase"].isna().sum())
        if n_missing:
            notes.append(f"{n_missing} pair(s) have no gold label and are excluded.")
    if not frame["paraphrase"].notna().any():
        notes.append(f"No pair has a {label_source} label yet: no statistic can be computed.")
    return frame.drop(columns="human_label"), notes


def label_distribution(judgments: pd.DataFrame, corpus_of_pair: pd.Series) -> pd.DataFrame:
    """How often each of the five answers was given, per corpus and Global; `share` is within the corpus."""
    corpus = judgments["pair_id"].astype(str).map(corpus_of_pair)
    parts = [(name, judgments["label"][corpus == name]) for name in corpus_of_pair.unique()]
    parts.append((GLOBAL, judgments["label"]))
    rows = []
    for name, answers in parts:
        counts = answers.value_counts().reindex(ANSWERS, fill_value=0)
        total = int(counts.sum())
        for answer, count in counts.items():
            rows.append(
                {
                    "corpus": name,
                    "answer": answer,
                    "paraphrase": PARAPHRASE_OF_ANSWER[answer],
                    "n": int(count),
                    "share": count / total if total else np.nan,
                }
            )
    frame = pd.DataFrame(rows, columns=["corpus", "answer", "paraphrase", "n", "share"])
    frame["paraphrase"] = frame["paraphrase"].astype("Int64")
    return frame
