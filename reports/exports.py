"""A campaign's pairs (with judgment counts and metric scores) and judgments, as the frames of its CSV files.

Tie rules of `pairs_frame`:
- `majority_label` is the answer (of the five, Don't know included) given most often
  to the pair; if two or more answers share the top count, or there are no judgments,
  it is empty.
- `paraphrase` is the binary majority of `annotation.scale` (Don't know casts no vote;
  a tie, or no binary vote at all, leaves it empty).
"""

from collections.abc import Callable, Iterable

import pandas as pd

from annotation.scale import ANSWERS, PARAPHRASE_OF_ANSWER, majority_paraphrase
from reports.frames import counted_judgments, judgment_log, metric_columns, pair_table

COUNT_COLUMN_OF_ANSWER = {answer: f"n_{answer}" for answer in ANSWERS}
PAIR_COLUMNS = [
    "pair_id",
    "corpus",
    "source",
    "hypothesis",
    "gold_label",
    "n_judgments",
    *COUNT_COLUMN_OF_ANSWER.values(),
    "majority_label",
    "paraphrase",
]
JUDGMENT_COLUMNS = [
    "judge",
    "english_level",
    "pair_id",
    "corpus",
    "label",
    "paraphrase",
    "is_training",
    "is_control",
    "judge_excluded",
    "top_sentence",
    "response_ms",
    "shown_at",
    "answered_at",
]

# An extra block of columns: a DataFrame with a `pair_id` column, or a function of the
# campaign returning one (e.g. a metric's scores per pair).
ExtraColumns = pd.DataFrame | Callable[..., pd.DataFrame]


def pairs_frame(campaign, *, extra: Iterable[ExtraColumns] = (), include_excluded=False) -> pd.DataFrame:
    """One row per real pair with its judgment counts, majority answer and binary label.

    Each of `extra` is merged on `pair_id` (left join) and its columns appended.
    Judgments of judges the researcher excluded count only with `include_excluded`.
    """
    pairs = pair_table([campaign])
    # Counts in the order of the pairs, on the same positional index.
    counts = _answer_counts(campaign, include_excluded).reindex(pairs["pk"], fill_value=0).reset_index(drop=True)
    frame = pairs.rename(columns={"external_id": "pair_id"})
    frame["n_judgments"] = counts.sum(axis=1)
    for answer, column in COUNT_COLUMN_OF_ANSWER.items():
        frame[column] = counts[answer]
    frame["majority_label"] = _majority_answer(counts)
    frame["paraphrase"] = _majority_paraphrase(counts)
    frame = frame[PAIR_COLUMNS]
    for block in extra:
        columns = block(campaign) if callable(block) else block
        frame = frame.merge(columns, on="pair_id", how="left", validate="one_to_one")
    return frame


def pairs_with_scores(campaign) -> tuple[pd.DataFrame, dict[str, str]]:
    """The pairs export with one column per metric, and the signatures of those columns."""
    columns, signatures = metric_columns(campaign)
    return pairs_frame(campaign, extra=[columns]), signatures


def _answer_counts(campaign, include_excluded=False) -> pd.DataFrame:
    """Counted judgments per pair pk (index) and answer (one column per answer)."""
    judgments = counted_judgments([campaign], include_excluded)
    counts = pd.crosstab(judgments["pair_pk"], judgments["label"]) if len(judgments) else pd.DataFrame()
    return counts.reindex(columns=ANSWERS, fill_value=0).astype("int64")


def _majority_answer(counts: pd.DataFrame) -> pd.Series:
    top = counts.max(axis=1)
    is_top = counts.eq(top, axis=0)
    unique_top = (is_top.sum(axis=1) == 1) & (top > 0)
    return counts.idxmax(axis=1).where(unique_top, None).astype(object)


def _majority_paraphrase(counts: pd.DataFrame) -> pd.Series:
    def votes(value):
        return counts[[answer for answer, vote in PARAPHRASE_OF_ANSWER.items() if vote == value]].sum(axis=1)

    return majority_paraphrase(votes(1), votes(0))


def judgments_frame(campaign) -> pd.DataFrame:
    """One row per judgment, training included (flagged), oldest first."""
    frame = judgment_log(campaign)
    frame["paraphrase"] = frame["label"].map(PARAPHRASE_OF_ANSWER).astype("Int64")
    frame["response_ms"] = frame["response_ms"].astype("Int64")
    for flag in ("is_training", "is_control", "judge_excluded"):
        frame[flag] = frame[flag].astype(bool)
    for moment in ("shown_at", "answered_at"):
        frame[moment] = frame[moment].map(_iso)
    return frame[JUDGMENT_COLUMNS]


def _iso(moment):
    return moment.isoformat() if moment is not None else None
