"""The one reader from the database to pandas: pairs, judgments and scores of campaigns.

Reports and the exports that join judgments with scores read the database through
these functions only; what they compute from the frames lives in `reports.analysis`
(the statistics) and `reports.exports` (the CSV files).
"""

from dataclasses import dataclass, field

import pandas as pd

from annotation.models import Judge, Judgment
from annotation.tagging import SIDES, tags_of
from campaigns.models import Pair
from scoring.metrics.registry import METRICS, direction_of
from scoring.models import Score
from scoring.service import latest_scores, signature_groups

METADATA_COLUMNS = ("generator", "template")
PAIR_TABLE_COLUMNS = ["pk", "campaign", "external_id", "corpus", "source", "hypothesis", "gold_label"]


def pair_table(campaigns) -> pd.DataFrame:
    """One row per real pair (no training pair, no control item), by campaign then age.

    Columns: `pk`, `campaign` (its slug), `external_id`, `corpus` (as stored), `source`,
    `hypothesis`, `gold_label` (Int64) and the metadata keys of METADATA_COLUMNS.
    """
    campaigns = list(campaigns)
    slug_of = {c.pk: c.slug for c in campaigns}
    rows = (
        Pair.objects.filter(campaign__in=campaigns, is_training=False, is_control=False)
        .order_by("campaign_id", "pk")
        .values_list("pk", "campaign_id", "external_id", "corpus", "source", "hypothesis", "gold_label", "metadata")
    )
    records = []
    for *columns, metadata in rows:
        columns[1] = slug_of[columns[1]]
        metadata = metadata if isinstance(metadata, dict) else {}
        records.append((*columns, *(metadata.get(key) for key in METADATA_COLUMNS)))
    pairs = pd.DataFrame.from_records(records, columns=[*PAIR_TABLE_COLUMNS, *METADATA_COLUMNS])
    pairs["gold_label"] = pairs["gold_label"].astype("Int64")
    return pairs


def counted_judgments(campaigns, include_excluded=False, fields=("label",)) -> pd.DataFrame:
    """The judgments results are made of (`Judgment.objects.counted`): `pair_pk`, `judge`, `english_level`, `fields`.

    `judge` is the judge's public pseudonym; training answers, control items and, unless
    asked, the judges a researcher excluded are left out.
    """
    rows = (
        Judgment.objects.filter(pair__campaign__in=list(campaigns))
        .counted(include_excluded)
        .order_by("pk")
        .values_list("pair_id", "judge_id", "judge__english_level", *fields)
    )
    judgments = pd.DataFrame.from_records(list(rows), columns=["pair_pk", "judge", "english_level", *fields])
    judgments["judge"] = [Judge(pk=pk).pseudonym for pk in judgments["judge"]]
    return judgments


JUDGMENT_LOG_FIELDS = {
    "judge": "judge_id",
    "english_level": "judge__english_level",
    "pair_id": "pair__external_id",
    "corpus": "pair__corpus",
    "label": "label",
    "is_training": "is_training",
    "is_control": "pair__is_control",
    "judge_excluded": "judge__excluded",
    "top_sentence": "assignment__top",
    "response_ms": "response_ms",
    "shown_at": "assignment__shown_at",
    "answered_at": "created_at",
}


def judgment_log(campaign) -> pd.DataFrame:
    """Every judgment of a campaign, training and excluded judges included (flagged), oldest first.

    One column per key of JUDGMENT_LOG_FIELDS, each holding the values as the database gives
    them (object dtype: times stay datetimes, missing values None); `judge` is the pseudonym.
    """
    rows = list(
        Judgment.objects.filter(pair__campaign=campaign)
        .order_by("created_at", "pk")
        .values_list(*JUDGMENT_LOG_FIELDS.values())
    )
    columns = zip(*rows) if rows else [()] * len(JUDGMENT_LOG_FIELDS)
    frame = pd.DataFrame({name: pd.Series(values, dtype=object) for name, values in zip(JUDGMENT_LOG_FIELDS, columns)})
    frame["judge"] = pd.Series([Judge(pk=pk).pseudonym for pk in frame["judge"]], dtype=object)
    return frame


def tagging_log(campaign) -> pd.DataFrame:
    """Every span tagging of a campaign, oldest first, training and excluded judges included (flagged).

    Columns: `pair_pk`, `pair_id`, `judge` (pseudonym), `is_training`, `is_control`,
    `judge_excluded`, then per side `<side>_tokens` (the stored words) and `<side>_tags` (0/1 per word).
    """
    judgments = (
        Judgment.objects.filter(pair__campaign=campaign).select_related("pair", "judge").order_by("created_at", "pk")
    )
    rows = []
    for judgment in judgments:
        if not isinstance(judgment.values, dict) or not set(SIDES) <= set(judgment.values):
            continue  # not a tagging (another task type's answer)
        row = {
            "pair_pk": judgment.pair_id,
            "pair_id": judgment.pair.external_id,
            "judge": judgment.judge.pseudonym,
            "is_training": judgment.is_training,
            "is_control": judgment.pair.is_control,
            "judge_excluded": judgment.judge.excluded,
        }
        for side in SIDES:
            words = judgment.pair.words(side)
            row[f"{side}_tokens"] = words
            row[f"{side}_tags"] = tags_of(judgment.values[side], len(words))
        rows.append(row)
    return pd.DataFrame(rows, columns=TAGGING_LOG_COLUMNS)


TAGGING_LOG_COLUMNS = [
    "pair_pk",
    "pair_id",
    "judge",
    "is_training",
    "is_control",
    "judge_excluded",
    *(f"{side}_{what}" for side in SIDES for what in ("tokens", "tags")),
]


@dataclass
class Scores:
    """Each metric's most recent signature: values per pair, the signature used, notes on what was left out."""

    wide: pd.DataFrame  # index: pair pk; one column per metric, in registry order
    signatures: dict[str, str]
    notes: list[str] = field(default_factory=list)


def latest_metric_scores(campaigns) -> Scores:
    """Scores of the real pairs of `campaigns`, one column per metric; older signatures are named in `notes`."""
    scores = Score.objects.filter(pair__campaign__in=list(campaigns), pair__is_training=False, pair__is_control=False)
    notes = []
    for metric, (used, *others) in signature_groups(scores).items():
        if others:
            ignored = "; ".join(f"{g['signature']} ({g['n']} scores)" for g in others)
            notes.append(f"{metric}: using the most recent signature {used['signature']}; ignored {ignored}.")
    values, signatures = latest_scores(scores)
    long = pd.DataFrame.from_records(values, columns=["pair_pk", "metric", "value"])
    wide = long.pivot(index="pair_pk", columns="metric", values="value") if values else pd.DataFrame()
    wide = wide.reindex(columns=list(signatures))
    wide.columns.name = None
    return Scores(wide, signatures, notes)


@dataclass
class Frames:
    """The analysis's inputs for a set of campaigns, and which signature each metric column uses."""

    pairs: pd.DataFrame
    judgments: pd.DataFrame
    directions: dict[str, str]
    signatures: dict[str, str]
    notes: list[str] = field(default_factory=list)


def load_frames(campaigns) -> Frames:
    """Real pairs (with one column per metric), counted judgments, metric directions and signatures.

    With several campaigns a pair's id is `slug:id`; a pair without corpus is in its campaign's.
    """
    campaigns = list(campaigns)
    table = pair_table(campaigns)
    several = len(campaigns) > 1
    pair_ids = table["campaign"] + ":" + table["external_id"] if several else table["external_id"]
    pairs = pd.DataFrame(
        {
            "pair_id": pair_ids,
            "corpus": table["corpus"].where(table["corpus"].astype(bool), table["campaign"]),
            **{column: table[column] for column in ("source", "hypothesis", "gold_label", *METADATA_COLUMNS)},
        }
    )
    pair_id_of_pk = pd.Series(pairs["pair_id"].to_numpy(), index=table["pk"].to_numpy())

    judgments = counted_judgments(campaigns)
    judgments.insert(0, "pair_id", judgments.pop("pair_pk").map(pair_id_of_pk))

    scores = latest_metric_scores(campaigns)
    directions, notes = _directions(scores.signatures)
    pairs = pairs.join(scores.wide.reindex(table["pk"]).set_axis(pairs.index))
    return Frames(pairs, judgments, directions, scores.signatures, scores.notes + notes)


def _directions(metrics):
    """Each metric's direction from the registry; a name it does not know is assumed higher-is-closer, with a note."""
    directions, notes = {}, []
    for metric in metrics:
        if metric not in METRICS:
            notes.append(f"{metric} is not a registered metric: assumed higher-is-closer.")
        directions[metric] = direction_of(metric) if metric in METRICS else "higher"
    return directions, notes


def metric_columns(campaign) -> tuple[pd.DataFrame, dict[str, str]]:
    """Per-pair metric scores of one campaign keyed by the pair's public id (`pair_id`), and each column's signature."""
    scores = latest_metric_scores([campaign])
    ids = pd.Series(dict(campaign.real_pairs.values_list("pk", "external_id")), dtype=object)
    wide = scores.wide.reset_index(drop=True)
    wide.insert(0, "pair_id", scores.wide.index.map(ids).astype(object))
    return wide, scores.signatures
