"""A campaign's pairs (with judgment counts and metric scores) and judgments, as the frames of its CSV files.

`pairs_frame`'s result columns (for similarity: counts, majority answer, binary label, and
their tie rules) come from the campaign's task type: `annotation.tasktypes`.
"""

import json
from collections.abc import Callable, Iterable

import pandas as pd
from django.http import HttpResponse

from annotation.scale import PARAPHRASE_OF_ANSWER
from annotation.tasktypes.registry import DEFAULT_TASK_TYPE, get_task_type, task_type_of
from reports.frames import counted_judgments, judgment_log, metric_columns, pair_table, tagging_log

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


def pairs_frame(campaign, *, extra: Iterable[ExtraColumns] = (), include_excluded=False) -> pd.DataFrame:
    """One row per real pair with its task type's pair-level results (similarity: counts, majority, binary label).

    Each of `extra` is merged on `pair_id` (left join) and its columns appended.
    Judgments of judges the researcher excluded count only with `include_excluded`.
    """
    pairs = pair_table([campaign])
    task_type = task_type_of(campaign)
    answers = counted_judgments([campaign], include_excluded, fields=task_type.stored_fields)
    # Pair-level results in the order of the pairs, on the same positional index.
    results = task_type.aggregate(answers.rename(columns={"pair_pk": "pair_id"}), pairs["pk"]).reset_index(drop=True)
    frame = pd.concat([pairs.rename(columns={"external_id": "pair_id"}), results], axis=1)
    frame = frame[[*PAIR_ID_COLUMNS, *task_type.pair_columns]]
    for block in extra:
        columns = block(campaign) if callable(block) else block
        frame = frame.merge(columns, on="pair_id", how="left", validate="one_to_one")
    return frame


def pairs_with_scores(campaign) -> tuple[pd.DataFrame, dict[str, str]]:
    """The pairs export with one column per metric, and the signatures of those columns."""
    columns, signatures = metric_columns(campaign)
    return pairs_frame(campaign, extra=[columns]), signatures


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


# One line per tagging: ParaTag's fields (tokens and 0/1 tags per sentence), as `import_pairs` reads them back.
TAGGING_FIELDS = [
    "pair_id",
    "judge",
    "is_training",
    "is_control",
    "judge_excluded",
    "source_tokens",
    "source_tags",
    "hypothesis_tokens",
    "hypothesis_tags",
]


def tagging_lines(campaign) -> list[str]:
    """The campaign's span taggings as JSON lines (one judgment each, oldest first)."""
    frame = tagging_log(campaign)
    return [
        json.dumps({field: row[field] for field in TAGGING_FIELDS}, ensure_ascii=False)
        for row in frame.to_dict("records")
    ]


def _iso(moment):
    return moment.isoformat() if moment is not None else None


def jsonl_response(lines, filename):
    """A JSON-lines download."""
    response = HttpResponse("".join(f"{line}\n" for line in lines), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
