"""A campaign's pairs (with judgment counts and metric scores) and judgments, as the frames of its CSV files.

`pairs_frame`'s result columns (for similarity: counts, majority answer, binary label, and
their tie rules) come from the campaign's task type: `annotation.tasktypes`. The `*_frames`
functions give the same rows a page at a time, for exports whose memory stays flat.
"""

import json
from collections.abc import Callable, Iterable, Iterator

import pandas as pd

from annotation.scale import PARAPHRASE_OF_ANSWER
from annotation.tasktypes.registry import DEFAULT_TASK_TYPE, get_task_type, task_type_of
from reports.frames import (
    counted_judgments,
    judgment_log,
    judgment_log_pages,
    metric_columns,
    metric_details,
    metric_signatures,
    metrics_with_details,
    pair_pk_ranges,
    pair_table,
)

PAIR_ID_COLUMNS = ["pair_id", "corpus", "source", "hypothesis", "gold_label"]
# The columns of a similarity campaign (the default task type); another type brings its own results.
PAIR_COLUMNS = [*PAIR_ID_COLUMNS, *get_task_type(DEFAULT_TASK_TYPE).pair_columns]
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
# Rows per page of a streamed export: memory is bounded by this, not by the campaign.
EXPORT_CHUNK_ROWS = 5000


def pairs_frame(campaign, *, extra: Iterable[ExtraColumns] = (), include_excluded=False, pk_range=None) -> pd.DataFrame:
    """One row per real pair with its task type's pair-level results (similarity: counts, majority, binary label).

    Each of `extra` is merged on `pair_id` (left join) and its columns appended.
    Judgments of judges the researcher excluded count only with `include_excluded`.
    `pk_range` restricts the rows to one page of pairs (`reports.frames.pair_pk_ranges`).
    """
    pairs = pair_table([campaign], pk_range)
    task_type = task_type_of(campaign)
    answers = counted_judgments([campaign], include_excluded, fields=task_type.stored_fields, pk_range=pk_range)
    # Pair-level results in the order of the pairs, on the same positional index.
    results = task_type.aggregate(answers.rename(columns={"pair_pk": "pair_id"}), pairs["pk"]).reset_index(drop=True)
    frame = pd.concat([pairs.rename(columns={"external_id": "pair_id"}), results], axis=1)
    frame = frame[[*PAIR_ID_COLUMNS, *task_type.pair_columns]]
    for block in extra:
        columns = block(campaign) if callable(block) else block
        frame = frame.merge(columns, on="pair_id", how="left", validate="one_to_one")
    return frame


def pairs_with_scores(campaign) -> tuple[pd.DataFrame, dict[str, str]]:
    """The pairs export with one column per metric (then each metric's details), and the signatures of those columns."""
    columns, signatures = metric_columns(campaign)
    return pairs_frame(campaign, extra=[columns, detail_columns]), signatures


def detail_columns(campaign, signatures=None, pk_range=None) -> pd.DataFrame:
    """One `<metric>_details` column (compact JSON: an LLM oracle's raw answers, verdict...) per metric keeping them."""
    details = metric_details(campaign, signatures, pk_range)
    if details.empty:
        return pd.DataFrame(columns=["pair_id"])
    details["column"] = details["metric"] + "_details"
    details["details"] = details["details"].map(lambda value: json.dumps(value, ensure_ascii=False))
    wide = details.pivot(index="pair_id", columns="column", values="details").reset_index()
    wide.columns.name = None
    return wide.astype({"pair_id": object})


def pairs_with_scores_pages(campaign, size=None) -> tuple[Iterator[pd.DataFrame], list[str], dict[str, str]]:
    """`pairs_with_scores` a page of pairs at a time: the frames (lazily), their columns and the signatures.

    The signatures are fixed once, before the first page, so every page uses the same ones.
    """
    signatures, _notes = metric_signatures([campaign])
    details = [f"{metric}_details" for metric in metrics_with_details(campaign, signatures)]
    columns = [*PAIR_ID_COLUMNS, *task_type_of(campaign).pair_columns, *signatures, *details]

    def pages():
        for pk_range in pair_pk_ranges([campaign], size or EXPORT_CHUNK_ROWS):
            scores, _ = metric_columns(campaign, signatures, pk_range)
            kept = detail_columns(campaign, signatures, pk_range)
            # A page whose pairs keep no details still has the columns, empty.
            yield pairs_frame(campaign, extra=[scores, kept], pk_range=pk_range).reindex(columns=columns)

    return pages(), columns, signatures


def judgments_frame(campaign) -> pd.DataFrame:
    """One row per judgment, training included (flagged), oldest first."""
    return _judgment_rows(judgment_log(campaign))


def judgments_frames(campaign, size=None) -> Iterator[pd.DataFrame]:
    """`judgments_frame` a page of at most `size` judgments at a time, oldest first."""
    for log in judgment_log_pages(campaign, size or EXPORT_CHUNK_ROWS):
        yield _judgment_rows(log)


def _judgment_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The export's columns of a judgment log: binary label, typed flags, ISO times."""
    frame["paraphrase"] = frame["label"].map(PARAPHRASE_OF_ANSWER).astype("Int64")
    frame["response_ms"] = frame["response_ms"].astype("Int64")
    for flag in ("is_training", "is_control", "judge_excluded"):
        frame[flag] = frame[flag].astype(bool)
    for moment in ("shown_at", "answered_at"):
        frame[moment] = frame[moment].map(_iso)
    return frame[JUDGMENT_COLUMNS]


def _iso(moment):
    return moment.isoformat() if moment is not None else None
