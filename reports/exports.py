"""A campaign's pairs (with judgment counts and metric scores) and judgments, as the frames of its CSV files.

`pairs_frame`'s result columns (for similarity: counts, majority answer, binary label, and
their tie rules) come from the campaign's task type: `annotation.tasktypes`. The `*_frames`
functions give the same rows a page at a time, for exports whose memory stays flat.
"""

import json
from collections.abc import Callable, Iterable, Iterator

import pandas as pd
from django.http import HttpResponse

from annotation.tagging import SIDES, tags_of
from annotation.tasktypes.similarity.scale import ANSWER_KEY
from annotation.votes import ANSWER_COLUMN, vote_columns
from campaigns.models import Pair, Score
from campaigns.scores import latest_details
from campaigns.task_types import default_task_type, get_task_type, task_type_names, task_type_of
from metrics.registry import metric_names
from metrics.words import word_tokens
from reports.frames import (
    corpus_names,
    counted_judgments,
    judgment_log,
    judgment_log_pages,
    metric_columns,
    metric_details,
    metric_signatures,
    metrics_with_details,
    pair_metadata,
    pair_pk_ranges,
    pair_systems,
    pair_table,
    tagging_log,
)

PAIR_ID_COLUMNS = ["pair_id", "corpus", "source", "hypothesis", "gold_label"]
# The columns of a similarity campaign (the default task type); another type brings its own results.
PAIR_COLUMNS = [*PAIR_ID_COLUMNS, *get_task_type(default_task_type()).pair_columns]
JUDGMENT_COLUMNS = [
    "judge",
    "english_level",
    "pair_id",
    "corpus",
    "system",
    "label",  # the 5-way answer (`Judgment.values["answer"]`), under the column's published name
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
    pairs["corpus"] = corpus_names(pairs)  # named as the report names it
    task_type = task_type_of(campaign)
    answers = counted_judgments([campaign], include_excluded, values=True, pk_range=pk_range)
    # Pair-level results in the order of the pairs, on the same positional index.
    results = task_type.aggregate(answers, pairs["pk"]).reset_index(drop=True)
    frame = pd.concat([pairs.rename(columns={"external_id": "pair_id"}), results], axis=1)
    frame = frame[[*PAIR_ID_COLUMNS, *task_type.pair_columns]]
    for block in extra:
        columns = block(campaign) if callable(block) else block
        frame = frame.merge(columns, on="pair_id", how="left", validate="one_to_one")
    return frame


def pairs_with_scores(campaign) -> tuple[pd.DataFrame, dict[str, str]]:
    """The pairs export: one column per metric, each metric's details, one column per metadata key; the signatures."""
    columns, signatures = metric_columns(campaign)
    return pairs_frame(campaign, extra=[columns, detail_columns, metadata_columns]), signatures


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
    keys = metadata_keys(campaign)
    columns = [*PAIR_ID_COLUMNS, *task_type_of(campaign).pair_columns, *signatures, *details, *keys]

    def pages():
        for pk_range in pair_pk_ranges([campaign], size or EXPORT_CHUNK_ROWS):
            scores, _ = metric_columns(campaign, signatures, pk_range)
            kept = detail_columns(campaign, signatures, pk_range)
            metadata = metadata_columns(campaign, pk_range, keys)
            # A page whose pairs lack some details or keys still has those columns, empty.
            yield pairs_frame(campaign, extra=[scores, kept, metadata], pk_range=pk_range).reindex(columns=columns)

    return pages(), columns, signatures


def computed_columns() -> set[str]:
    """Names of the columns the pairs export computes: the pair's own, every task type's results, every metric."""
    names = set(PAIR_ID_COLUMNS) | set(metric_names()) | {f"{metric}_details" for metric in metric_names()}
    for name in task_type_names():
        names |= set(get_task_type(name).pair_columns)
    return names


# Metadata columns come in this order, then any other key by name: PostgreSQL's jsonb does
# not keep a file's column order, so the order is fixed here for every database.
METADATA_ORDER = [
    "system",
    "generator",
    "generator_revision",
    "template",
    "generation_run",
    "candidate",
    "decoding",
    "seed",
    "source_id",
    "raw_output",
]


def metadata_keys(campaign) -> list[str]:
    """The metadata keys of the campaign's real pairs that become columns: METADATA_ORDER, then by name.

    A key named like a computed column is left out: it is a stale copy from a re-imported
    export, and the export computes that column afresh.
    """
    keys = set()
    for metadata in campaign.real_pairs.values_list("metadata", flat=True).iterator(chunk_size=EXPORT_CHUNK_ROWS):
        if isinstance(metadata, dict):
            keys.update(metadata)
    keys -= computed_columns()
    return [key for key in METADATA_ORDER if key in keys] + sorted(keys - set(METADATA_ORDER))


def metadata_columns(campaign, pk_range=None, keys=None) -> pd.DataFrame:
    """One column per metadata key (`metadata_keys`) of the real pairs, keyed by `pair_id`; `pk_range`: one page.

    Generation provenance (generator, template, decoding...) and an imported file's extra
    columns come out as they went in; a nested value is written as JSON by the CSV guard
    (`campaigns.exports.csv_cell`).
    """
    keys = metadata_keys(campaign) if keys is None else keys
    rows = pair_metadata(campaign, pk_range)
    records = []
    for pair_id, metadata in rows:
        metadata = metadata if isinstance(metadata, dict) else {}
        records.append([pair_id, *(metadata.get(key) for key in keys)])
    return pd.DataFrame.from_records(records, columns=["pair_id", *keys]).astype(object)


def judgments_frame(campaign) -> pd.DataFrame:
    """One row per judgment, training included (flagged), oldest first."""
    return _judgment_rows(judgment_log(campaign), pair_systems(campaign), task_type_of(campaign).vote)


def judgments_frames(campaign, size=None) -> Iterator[pd.DataFrame]:
    """`judgments_frame` a page of at most `size` judgments at a time, oldest first."""
    systems, vote = pair_systems(campaign), task_type_of(campaign).vote
    for log in judgment_log_pages(campaign, size or EXPORT_CHUNK_ROWS):
        yield _judgment_rows(log, systems, vote)


def _judgment_rows(frame: pd.DataFrame, systems: dict[str, str], vote) -> pd.DataFrame:
    """The export's columns of a judgment log: the pair's system, the 5-way answer as `label` (the published name),
    the binary vote (the type's `vote`), the other answers one column per key, typed flags, ISO times."""
    frame["system"] = frame["pair_id"].map(systems).fillna("").astype(object)
    stored = frame["values"].map(lambda values: values if isinstance(values, dict) else {})
    frame["label"] = stored.map(lambda values: values.get(ANSWER_KEY, "")).astype(object)
    answers = vote.answers(stored) if vote is not None else None
    frame["paraphrase"] = vote_columns(frame.assign(**{ANSWER_COLUMN: answers}), vote)["vote"].astype("Int64")
    frame["response_ms"] = frame["response_ms"].astype("Int64")
    for flag in ("is_training", "is_control", "judge_excluded"):
        frame[flag] = frame[flag].astype(bool)
    for moment in ("shown_at", "answered_at"):
        frame[moment] = frame[moment].map(_iso)
    # The other answers kept in `values` (e.g. PEM's four ratings) get one column per key, after the label.
    keys = list(dict.fromkeys(key for values in stored for key in values if key != ANSWER_KEY))
    raw = pd.DataFrame(
        [[values.get(key) for key in keys] for values in stored],
        columns=keys,
        index=frame.index,
        dtype=object,
    )
    columns = JUDGMENT_COLUMNS[: JUDGMENT_COLUMNS.index("label") + 1] + keys
    columns += JUDGMENT_COLUMNS[JUDGMENT_COLUMNS.index("label") + 1 :]
    return pd.concat([frame.drop(columns="values"), raw], axis=1)[columns]


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
    """The campaign's span taggings as JSON lines: the judges' (one judgment each, oldest first),
    then the span detector's where metric `paratag` scored the pairs, each line saying which (`predicted`)."""
    frame = tagging_log(campaign)
    judges = [
        json.dumps({**{field: row[field] for field in TAGGING_FIELDS}, "predicted": False}, ensure_ascii=False)
        for row in frame.to_dict("records")
    ]
    return judges + predicted_tagging_lines(campaign)


def predicted_tagging_lines(campaign) -> list[str]:
    """The detector's tagging of each pair (`paratag`'s newest signature, ParaTag section 5.2), one line per pair."""
    rows = latest_details(Score.objects.filter(pair__campaign=campaign, metric="paratag"))
    pairs = Pair.objects.in_bulk([pair_pk for pair_pk, _metric, _details in rows])
    lines = []
    for pair_pk, _metric, details in sorted(rows, key=lambda row: row[0]):
        details = json.loads(details) if isinstance(details, str) else details
        pair = pairs[pair_pk]
        line = {"pair_id": pair.external_id, "judge": f"detector {details.get('detector', '')}".strip()}
        line |= {"is_training": pair.is_training, "is_control": pair.is_control, "judge_excluded": False}
        for side in SIDES:
            # The words the detector tagged: by the tokenisation its scores record (1 before they recorded one).
            words = word_tokens(getattr(pair, side), details.get("tokenisation", 1))
            line[f"{side}_tokens"] = words
            line[f"{side}_tags"] = tags_of(details.get("tags", {}).get(side, []), len(words))
        lines.append(json.dumps(line | {"predicted": True}, ensure_ascii=False))
    return lines


def _iso(moment):
    return moment.isoformat() if moment is not None else None


def jsonl_response(lines, filename):
    """A JSON-lines download."""
    response = HttpResponse("".join(f"{line}\n" for line in lines), content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
