"""A campaign's pairs (with judgment counts and metric scores) and judgments, as the frames of its CSV files.

`pairs_frame`'s result columns (for similarity: counts, majority answer, binary label, and
their tie rules) come from the campaign's task type: `annotation.tasktypes`.
"""

import json
from collections.abc import Callable, Iterable

import pandas as pd

from annotation.scale import PARAPHRASE_OF_ANSWER
from annotation.tasktypes.registry import DEFAULT_TASK_TYPE, get_task_type, task_type_names, task_type_of
from reports.frames import counted_judgments, judgment_log, metric_columns, pair_systems, pair_table
from scoring.metrics.registry import metric_names

PAIR_ID_COLUMNS = ["pair_id", "corpus", "source", "hypothesis", "gold_label"]
# The columns of a similarity campaign (the default task type); another type brings its own results.
PAIR_COLUMNS = [*PAIR_ID_COLUMNS, *get_task_type(DEFAULT_TASK_TYPE).pair_columns]
JUDGMENT_COLUMNS = [
    "judge",
    "english_level",
    "pair_id",
    "corpus",
    "system",
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
    """The pairs export with one column per metric, then one per metadata key, and the metrics' signatures."""
    columns, signatures = metric_columns(campaign)
    return pairs_frame(campaign, extra=[columns, metadata_columns]), signatures


def computed_columns() -> set[str]:
    """Names of the columns the pairs export computes: the pair's own, every task type's results, every metric."""
    names = set(PAIR_ID_COLUMNS) | set(metric_names())
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


def metadata_columns(campaign) -> pd.DataFrame:
    """One column per metadata key of the real pairs (METADATA_ORDER, then by name), keyed by `pair_id`.

    Generation provenance (generator, template, decoding...) and an imported file's extra
    columns come out as they went in; a nested value is written as JSON. A key named like a
    computed column is left out: it is a stale copy from a re-imported export, and the
    export computes that column afresh.
    """
    rows = campaign.real_pairs.order_by("pk").values_list("external_id", "metadata")
    skip = computed_columns()
    records, keys = [], set()
    for pair_id, metadata in rows:
        metadata = metadata if isinstance(metadata, dict) else {}
        records.append({**{key: _cell(value) for key, value in metadata.items()}, "pair_id": pair_id})
        keys.update(key for key in metadata if key not in skip)
    ordered = [key for key in METADATA_ORDER if key in keys] + sorted(keys - set(METADATA_ORDER))
    return pd.DataFrame.from_records(records, columns=["pair_id", *ordered]).astype(object)


def _cell(value):
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def judgments_frame(campaign) -> pd.DataFrame:
    """One row per judgment, training included (flagged), oldest first."""
    frame = judgment_log(campaign)
    frame["system"] = frame["pair_id"].map(pair_systems(campaign)).fillna("").astype(object)
    frame["paraphrase"] = frame["label"].map(PARAPHRASE_OF_ANSWER).astype("Int64")
    frame["response_ms"] = frame["response_ms"].astype("Int64")
    for flag in ("is_training", "is_control", "judge_excluded"):
        frame[flag] = frame[flag].astype(bool)
    for moment in ("shown_at", "answered_at"):
        frame[moment] = frame[moment].map(_iso)
    # Answers kept in `values` (e.g. PEM's four ratings) get one column per key, after the label.
    keys = list(dict.fromkeys(key for values in frame["values"] if isinstance(values, dict) for key in values))
    raw = pd.DataFrame(
        [[values.get(key) if isinstance(values, dict) else None for key in keys] for values in frame["values"]],
        columns=keys,
        index=frame.index,
        dtype=object,
    )
    columns = JUDGMENT_COLUMNS[: JUDGMENT_COLUMNS.index("label") + 1] + keys
    columns += JUDGMENT_COLUMNS[JUDGMENT_COLUMNS.index("label") + 1 :]
    return pd.concat([frame.drop(columns="values"), raw], axis=1)[columns]


def _iso(moment):
    return moment.isoformat() if moment is not None else None
