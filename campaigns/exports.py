"""A campaign's pairs and judgments as pandas DataFrames, and CSV files of them.

Tie rules of `pairs_frame`:
- `majority_label` is the answer (of the five, Don't know included) given most often
  to the pair; if two or more answers share the top count, or there are no judgments,
  it is empty.
- `paraphrase` maps each answer to the binary label (Very different and Slightly
  similar: 0; Mostly similar and Same meaning: 1; Don't know: no vote) and takes the
  majority; a tie between 0 and 1, or no binary vote at all, leaves it empty.
"""

import io
from collections.abc import Callable, Iterable, Iterator

import pandas as pd
from django.db.models import Q

from annotation.models import PARAPHRASE_OF_LABEL, Judge, Judgment, Label
from annotation.scale import majority_paraphrase

COUNT_COLUMN_OF_LABEL = {label: f"n_{label.value}" for label in Label}
PAIR_COLUMNS = [
    "pair_id",
    "corpus",
    "source",
    "hypothesis",
    "gold_label",
    "n_judgments",
    *COUNT_COLUMN_OF_LABEL.values(),
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
# Rows per piece of a streamed export: memory stays bounded by this, not by the campaign.
EXPORT_CHUNK_ROWS = 5000


def pairs_frame(campaign, *, extra: Iterable[ExtraColumns] = (), include_excluded=False, pairs=None) -> pd.DataFrame:
    """One row per real pair with its judgment counts, majority answer and binary label.

    Each of `extra` is merged on `pair_id` (left join) and its columns appended.
    Judgments of judges the researcher excluded count only with `include_excluded`.
    `pairs` restricts the rows to a subset of the real pairs (a chunk of a streamed export).
    """
    pairs_query = campaign.real_pairs if pairs is None else pairs
    pairs = pd.DataFrame.from_records(
        list(
            pairs_query.order_by("pk").values_list("pk", "external_id", "corpus", "source", "hypothesis", "gold_label")
        ),
        columns=["pk", "pair_id", "corpus", "source", "hypothesis", "gold_label"],
    )
    # Counts in the order of the pairs, on the same positional index.
    counts = _label_counts(campaign, include_excluded, pairs_query)
    counts = counts.reindex(pairs["pk"], fill_value=0).reset_index(drop=True)
    frame = pairs.drop(columns="pk")
    frame["gold_label"] = frame["gold_label"].astype("Int64")
    frame["n_judgments"] = counts.sum(axis=1)
    for label, column in COUNT_COLUMN_OF_LABEL.items():
        frame[column] = counts[label.value]
    frame["majority_label"] = _majority_label(counts)
    frame["paraphrase"] = _majority_paraphrase(counts)
    frame = frame[PAIR_COLUMNS]
    for block in extra:
        columns = block(campaign) if callable(block) else block
        frame = frame.merge(columns, on="pair_id", how="left", validate="one_to_one")
    return frame


def pair_chunks(campaign, size=None) -> Iterator:
    """The campaign's real pairs as querysets of consecutive pks (keyset pages), for streamed exports."""
    size = size or EXPORT_CHUNK_ROWS
    last = 0
    while True:
        pks = list(campaign.real_pairs.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:size])
        if not pks:
            return
        yield campaign.real_pairs.filter(pk__gt=last, pk__lte=pks[-1])
        last = pks[-1]


def pairs_frames(campaign, *, extra_of_chunk=None, size=None) -> Iterator[pd.DataFrame]:
    """`pairs_frame` chunk by chunk; `extra_of_chunk(pairs)` gives each chunk's extra columns."""
    for chunk in pair_chunks(campaign, size):
        yield pairs_frame(campaign, pairs=chunk, extra=[extra_of_chunk(chunk)] if extra_of_chunk else ())


def _label_counts(campaign, include_excluded=False, pairs=None) -> pd.DataFrame:
    """Counted judgments per pair pk (index) and answer (one column per label value), in one query.

    Training answers, control items and (unless asked) excluded judges are left out.
    """
    judgments = Judgment.objects.filter(pair__campaign=campaign)
    if pairs is not None:
        judgments = judgments.filter(pair__in=pairs)
    rows = judgments.counted(include_excluded).values_list("pair_id", "label").order_by()
    judgments = pd.DataFrame.from_records(list(rows), columns=["pk", "label"])
    counts = pd.crosstab(judgments["pk"], judgments["label"]) if len(judgments) else pd.DataFrame()
    return counts.reindex(columns=Label.values, fill_value=0).astype("int64")


def _majority_label(counts: pd.DataFrame) -> pd.Series:
    top = counts.max(axis=1)
    is_top = counts.eq(top, axis=0)
    unique_top = (is_top.sum(axis=1) == 1) & (top > 0)
    return counts.idxmax(axis=1).where(unique_top, None).astype(object)


def _majority_paraphrase(counts: pd.DataFrame) -> pd.Series:
    votes = {
        value: counts[[label.value for label, vote in PARAPHRASE_OF_LABEL.items() if vote == value]].sum(axis=1)
        for value in (0, 1)
    }
    return majority_paraphrase(votes[1], votes[0])


def judgments_frame(campaign, judgments=None) -> pd.DataFrame:
    """One row per judgment, training included (flagged), oldest first; `judgments` restricts to a subset."""
    judgments = Judgment.objects.filter(pair__campaign=campaign) if judgments is None else judgments
    rows = judgments.order_by("created_at", "pk").values_list(
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


def judgments_frames(campaign, size=None) -> Iterator[pd.DataFrame]:
    """`judgments_frame` in pages of at most `size` judgments, oldest first (keyset on created_at, pk)."""
    size = size or EXPORT_CHUNK_ROWS
    judgments = Judgment.objects.filter(pair__campaign=campaign).order_by("created_at", "pk")
    page = judgments
    while True:
        keys = list(page.values_list("created_at", "pk")[:size])
        if not keys:
            return
        yield judgments_frame(campaign, judgments.filter(pk__in=[pk for _at, pk in keys]))
        at, pk = keys[-1]
        page = judgments.filter(Q(created_at__gt=at) | Q(created_at=at, pk__gt=pk))


def _iso(moment):
    return moment.isoformat() if moment is not None else None


# A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(text):
    """Prefix a text cell a spreadsheet would run as a formula with an apostrophe (OWASP's advice)."""
    if isinstance(text, str) and text.startswith(FORMULA_TRIGGERS):
        return "'" + text
    return text


def write_csv(frame: pd.DataFrame, path_or_buffer, header=True) -> None:
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
    safe.to_csv(path_or_buffer, index=False, header=header, encoding="utf-8", lineterminator="\r\n")


def csv_chunks(frames: Iterable[pd.DataFrame], columns: list[str]) -> Iterator[str]:
    """CSV text of consecutive frames as one file: the header once, then each frame's rows."""
    header = io.StringIO()
    write_csv(pd.DataFrame(columns=columns), header)
    yield header.getvalue()
    for frame in frames:
        buffer = io.StringIO()
        write_csv(frame, buffer, header=False)
        yield buffer.getvalue()
