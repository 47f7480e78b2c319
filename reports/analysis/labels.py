"""Labels of pairs: the judges' majority, the gold label, or a judge-quality model's, and the 5-way answers.

Crowd-aware sources (`CROWD_SOURCES`) weigh each judge by a model of its quality, fitted on every judge's
votes with crowd-kit: Dawid & Skene (1979), one confusion matrix per judge; MACE (Hovy et al. 2013), each
judge a mixture of a competent judge and a spammer. The judges' majority stays the default (the papers').

The judges' labels are read from the judgments' vote columns (`annotation.votes.VOTE_COLUMNS`: `vote`,
`abstained`, `rating`), which the task type's `Vote` declaration fills in (`reports.frames.load_frames`,
or `annotation.votes.with_votes`): whatever the type, its answers become human labels the same way.
The majority rule is `annotation.votes.majority_paraphrase`; only the 5-way answer distribution reads
the similarity scale's answers (the frame's `answer` column, as the type's `Vote` reads it).
"""

import numpy as np
import pandas as pd

from annotation.tasktypes.similarity.scale import ANSWERS, PARAPHRASE_OF_ANSWER
from annotation.votes import ANSWER_COLUMN, NON_PARAPHRASE, PARAPHRASE, majority_paraphrase

GLOBAL = "Global"
CLASS_NAMES = {1: PARAPHRASE, 0: NON_PARAPHRASE}
CROWD_SOURCES = ("dawid_skene", "mace")
LABEL_SOURCES = ("human", "gold", *CROWD_SOURCES)


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
    """Each judge's binary vote per pair, from the task type's vote columns: `pair_id`, `judge`, `vote` (int 1 or
    0) and `ordinal` (the type's rating, NaN where it has none).

    The judgments without a vote (a Don't know, a type that declares none) are left out: the input of label
    sources that weigh each judge (a crowd model, the human ceiling) as the majority weighs them all alike.
    """
    voted = judgments[judgments["vote"].notna()] if len(judgments) else judgments.iloc[:0]
    return pd.DataFrame(
        {
            "pair_id": voted["pair_id"].astype(str).to_numpy(),
            "judge": voted["judge"].astype(str).to_numpy(),
            "vote": voted["vote"].to_numpy(dtype="int64") if len(voted) else np.array([], dtype="int64"),
            "ordinal": pd.to_numeric(voted["rating"], errors="coerce").to_numpy(dtype=float)
            if len(voted)
            else np.array([], dtype=float),
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
    # Each pair's votes looked up by its id in the judged pairs' (a hash of those ids), then set row for row: a
    # join on the column hashed every pair's id (twice the time at 400,000 pairs), for the same frame.
    looked_up = votes.reindex(frame["pair_id"])
    frame = frame.assign(**{column: looked_up[column].array for column in looked_up.columns})
    for column in ("n_judgments", "n_paraphrase_votes", "n_non_paraphrase_votes", "n_dont_know"):
        frame[column] = frame[column].fillna(0).astype("int64")
    frame["is_tie"] = frame["is_tie"].fillna(False).astype(bool)
    if label_source in CROWD_SOURCES:
        crowd = crowd_labels(judge_votes(judgments), label_source)
        frame["paraphrase"] = pd.array(frame["pair_id"].map(crowd), dtype="Int64")
        if frame["paraphrase"].notna().any() and judgments["judge"].nunique() < 2:
            notes.append(f"One judge only: {title_for_source(label_source)} labels are that judge's votes.")
    elif label_source == "human":
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


def _crowd_frame(votes):
    known = votes[votes["vote"].notna()]
    return pd.DataFrame(
        {"task": known["pair_id"].to_numpy(), "worker": known["judge"].to_numpy(), "label": known["vote"].astype(int)}
    )


# The last model fitted, by what it was fitted on: a crowd-aware report fits its labels, then reads the same
# model's judge estimates (crowd-kit's MACE takes seconds per fit).
_LAST_FIT = {}


def _fitted(votes, source, seed=2024):
    """The crowd-kit model of `source` fitted on the votes (None without votes); labels are 0/1.

    MACE runs one restart of 50 variational iterations (crowd-kit's default is 10 restarts: each takes
    seconds, pandas-bound, whatever the number of votes), seeded.
    """
    crowd = _crowd_frame(votes)
    if crowd.empty:
        return None, crowd
    key = (source, seed, int(pd.util.hash_pandas_object(crowd, index=False).sum()), len(crowd))
    if key in _LAST_FIT:
        return _LAST_FIT[key], crowd
    from crowdkit.aggregation import MACE, DawidSkene

    if source == "dawid_skene":
        model = DawidSkene(n_iter=100).fit(crowd)
    else:
        model = MACE(n_restarts=1, n_iter=50, random_state=seed).fit(crowd)
    _LAST_FIT.clear()
    _LAST_FIT[key] = model
    return model, crowd


def crowd_labels(votes: pd.DataFrame, source: str, seed: int = 2024) -> pd.Series:
    """Per pair (index `pair_id`): the 0/1 label of the judge-quality model `source` (`CROWD_SOURCES`)."""
    if source not in CROWD_SOURCES:
        raise ValueError(f"source must be one of {CROWD_SOURCES}, got {source!r}")
    model, crowd = _fitted(votes, source, seed)
    if model is None:
        return pd.Series(dtype="Int64", index=pd.Index([], name="pair_id"))
    labels = model.labels_.astype(int)
    # A class no judge voted for is absent from crowd-kit's model: every label is then the one class voted.
    return pd.Series(labels.to_numpy(), index=pd.Index(labels.index.astype(str), name="pair_id"), dtype="Int64")


def judge_competence(votes: pd.DataFrame, source: str, seed: int = 2024) -> pd.DataFrame:
    """Per judge: votes, agreement with the others' majority, and the estimates of the crowd-aware `source`
    the report reads its labels from: Dawid-Skene's sensitivity, specificity and accuracy (its confusion matrix
    weighed by the class priors), or MACE's competence (1 - P(spamming)). Empty for another label source."""
    columns = [
        "judge", "n_votes", "agreement_with_others", "dawid_skene_sensitivity", "dawid_skene_specificity",
        "dawid_skene_accuracy", "mace_competence",
    ]  # fmt: skip
    known = votes[votes["vote"].notna()]
    if source not in CROWD_SOURCES or known.empty or known["judge"].nunique() < 2 or known["vote"].nunique() < 2:
        return pd.DataFrame(columns=columns)
    totals = known.groupby("pair_id")["vote"].agg(["sum", "count"])
    rows = known.join(totals, on="pair_id")
    others_yes, others_n = rows["sum"] - rows["vote"], rows["count"] - 1
    comparable = (others_n > 0) & (2 * others_yes != others_n)
    agrees = comparable & ((2 * others_yes > others_n).astype(float) == rows["vote"])
    per_judge = pd.DataFrame({"judge": rows["judge"], "comparable": comparable, "agrees": agrees})
    grouped = per_judge.groupby("judge")[["comparable", "agrees"]].sum()
    agreement = grouped["agrees"] / grouped["comparable"].where(grouped["comparable"] > 0)
    model, crowd = _fitted(votes, source, seed)
    errors, priors, competence = None, {}, pd.Series(dtype=float)
    if source == "dawid_skene":
        errors = model.errors_  # (judge, vote) x true class: P(vote | true class)
        priors = model.priors_
    else:
        # MACE's rows follow the judges' first appearance (pd.factorize, as crowd-kit fits); column 1: knowing,
        # column 0: spamming (variational parameters, normalised here to a probability).
        knowing = model.spamming_[:, 1] / model.spamming_.sum(axis=1)
        competence = pd.Series(knowing, index=pd.factorize(crowd["worker"])[1])
    result = []
    for judge, n in known.groupby("judge").size().items():
        known_judge = errors is not None and judge in errors.index.get_level_values(0)
        confusion = errors.loc[judge] if known_judge else None
        sensitivity = _confusion(confusion, 1)
        specificity = _confusion(confusion, 0)
        result.append(
            {
                "judge": judge,
                "n_votes": int(n),
                "agreement_with_others": agreement.get(judge, np.nan),
                "dawid_skene_sensitivity": sensitivity,
                "dawid_skene_specificity": specificity,
                "dawid_skene_accuracy": priors.get(1, np.nan) * sensitivity + priors.get(0, np.nan) * specificity,
                "mace_competence": float(competence.get(judge, np.nan)),
            }
        )
    return pd.DataFrame(result, columns=columns)


def _confusion(confusion, label):
    """P(the judge votes `label` | the true class is `label`) from Dawid-Skene's errors, NaN when unknown."""
    if confusion is None or label not in confusion.columns:
        return np.nan
    # crowd-kit lists only the votes a judge cast: one never voting `label` never gets it right.
    return float(confusion.loc[label, label]) if label in confusion.index else 0.0


def title_for_source(source):
    return {"dawid_skene": "Dawid-Skene", "mace": "MACE"}.get(source, source)


def answer_distribution(judgments: pd.DataFrame, corpus_of_pair: pd.Series, corpora=None) -> pd.DataFrame:
    """How often each of the five answers was given, per corpus and Global; `share` is within the corpus.

    `corpus_of_pair`: each judged pair's corpus, by pair id; `corpora`: every corpus, in the report's order
    (default: `corpus_of_pair`'s, in order of appearance). The answers are the frame's `answer` column
    (`annotation.votes.ANSWER_COLUMN`): a type whose answers are not the 5-way scale's counts none."""
    corpus = judgments["pair_id"].astype(str).map(corpus_of_pair)
    answers = judgments[ANSWER_COLUMN].where(judgments[ANSWER_COLUMN].isin(ANSWERS), None)
    corpora = corpus_of_pair.unique() if corpora is None else corpora
    parts = [(name, answers[corpus == name]) for name in corpora]
    parts.append((GLOBAL, answers))
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
