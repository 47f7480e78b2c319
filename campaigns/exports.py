"""A campaign's pairs and judgments as pandas DataFrames, and CSV files of them.

`pairs_frame`'s result columns (counts, majority answer, binary label, and their
tie rules) come from the campaign's task type: `annotation.tasktypes`.
"""

from collections.abc import Callable, Iterable

import pandas as pd

from annotation.models import PARAPHRASE_OF_LABEL, Judge, Judgment
from annotation.tasktypes.registry import DEFAULT_TASK_TYPE, get_task_type, task_type_of

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
    """One row per real pair with its task type's pair-level results (for similarity: counts, majority, binary label).

    Each of `extra` is merged on `pair_id` (left join) and its columns appended.
    Judgments of judges the researcher excluded count only with `include_excluded`.
    """
    pairs = pd.DataFrame.from_records(
        list(
            campaign.real_pairs.order_by("pk").values_list(
                "pk", "external_id", "corpus", "source", "hypothesis", "gold_label"
            )
        ),
        columns=["pk", *PAIR_ID_COLUMNS],
    )
    task_type = task_type_of(campaign)
    # Pair-level results in the order of the pairs, on the same positional index.
    results = task_type.aggregate(_counted_answers(campaign, task_type, include_excluded), pairs["pk"])
    frame = pd.concat([pairs.drop(columns="pk"), results.reset_index(drop=True)], axis=1)
    frame["gold_label"] = frame["gold_label"].astype("Int64")
    frame = frame[[*PAIR_ID_COLUMNS, *task_type.pair_columns]]
    for block in extra:
        columns = block(campaign) if callable(block) else block
        frame = frame.merge(columns, on="pair_id", how="left", validate="one_to_one")
    return frame


def _counted_answers(campaign, task_type, include_excluded=False) -> pd.DataFrame:
    """The counted judgments' answers (`pair_id` = the pair's pk), in one query.

    Training answers, control items and (unless asked) excluded judges are left out.
    """
    fields = ["pair_id", *task_type.stored_fields]
    rows = Judgment.objects.filter(pair__campaign=campaign).counted(include_excluded).values_list(*fields).order_by()
    return pd.DataFrame.from_records(list(rows), columns=fields)


def judgments_frame(campaign) -> pd.DataFrame:
    """One row per judgment, training included (flagged), oldest first."""
    rows = (
        Judgment.objects.filter(pair__campaign=campaign)
        .order_by("created_at", "pk")
        .values_list(
            "judge_id",
            "judge__english_level",
            "pair__external_id",
            "pair__corpus",
            "label",
            "is_training",
            "pair__is_control",
            "judge__excluded",
            "assignment__top",
            "response_ms",
            "assignment__shown_at",
            "created_at",
        )
    )
    frame = pd.DataFrame.from_records(
        [
            (
                Judge(pk=judge_id).pseudonym,
                english_level,
                pair_id,
                corpus,
                label,
                PARAPHRASE_OF_LABEL[label],
                is_training,
                is_control,
                judge_excluded,
                top,
                response_ms,
                _iso(shown_at),
                _iso(answered_at),
            )
            for (
                judge_id,
                english_level,
                pair_id,
                corpus,
                label,
                is_training,
                is_control,
                judge_excluded,
                top,
                response_ms,
                shown_at,
                answered_at,
            ) in rows
        ],
        columns=JUDGMENT_COLUMNS,
    )
    frame["paraphrase"] = frame["paraphrase"].astype("Int64")
    frame["response_ms"] = frame["response_ms"].astype("Int64")
    for flag in ("is_training", "is_control", "judge_excluded"):
        frame[flag] = frame[flag].astype(bool)
    return frame


def _iso(moment):
    return moment.isoformat() if moment is not None else None


# A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(text):
    """Prefix a text cell a spreadsheet would run as a formula with an apostrophe (OWASP's advice)."""
    if isinstance(text, str) and text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def write_csv(frame: pd.DataFrame, path_or_buffer) -> None:
    """Write a frame as UTF-8 CSV without the index; missing values are empty cells.

    Text cells that a spreadsheet would evaluate (=, +, -, @ ...) are neutralised;
    numeric columns, negative scores included, are left as numbers.
    """
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(neutralise_formula)
    # CRLF, as RFC 4180 has it: Python's csv then quotes any field holding a bare
    # \r or \n, which a \n terminator would leave unquoted (and split the row).
    safe.to_csv(path_or_buffer, index=False, encoding="utf-8", lineterminator="\r\n")
