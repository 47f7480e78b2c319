"""The one reader from the database to pandas: pairs, judgments and scores of campaigns.

Reports and the exports that join judgments with scores read the database through
these functions only; what they compute from the frames lives in `reports.analysis`
(the statistics) and `reports.exports` (the CSV files).
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import pandas as pd
from django.db.models import Count, Max, Min, Q, TextField
from django.db.models.functions import Cast

from annotation.models import JsonKeyText, Judge, Judgment, decoded_json
from annotation.tagging import SIDES, tags_of
from annotation.votes import ANSWER_COLUMN, VOTE_COLUMNS, with_votes
from campaigns.models import Pair, Score
from campaigns.scores import (
    latest_details,
    signature_groups,
    signature_groups_in,
    values_by_pair,
    values_in,
    values_under,
)
from campaigns.task_types import task_type_of
from metrics.base import parse_signature
from metrics.registry import METRICS, direction_of, title_of
from parasol.db import raw_row_chunks, raw_rows
from reports.analysis.collection import ROUND_KEYS
from reports.analysis.labels import CROWD_SOURCES
from reports.analysis.oracle import verdicts_frame
from reports.analysis.systems import system_names
from reports.analysis.tables import edit_distances

# A keyset page of pairs: the pks after the first bound, up to and including the second.
PkRange = tuple[int, int]

METADATA_COLUMNS = ("generator", "template")
PAIR_TABLE_COLUMNS = ["pk", "campaign", "external_id", "corpus", "source", "hypothesis", "gold_label"]
# Pairs whose edit distance the report's workers lack (added meanwhile) are read this many per query.
LACKING_PER_QUERY = 5_000


def _real_pairs(campaigns):
    return Pair.objects.filter(campaign__in=list(campaigns), is_training=False, is_control=False)


def _within(queryset, pk_range: PkRange | None, field="pk"):
    """The rows of `queryset` whose `field` (a pair pk) lies in `pk_range`; all of them without one."""
    if pk_range is None:
        return queryset
    after, last = pk_range
    return queryset.filter(**{f"{field}__gt": after, f"{field}__lte": last})


def pair_pk_ranges(campaigns, size: int) -> Iterator[PkRange]:
    """Keyset pages of the real pairs, at most `size` each: a large campaign is read a page at a time."""
    pairs = _real_pairs(campaigns).order_by("pk")
    last = 0
    while True:
        pks = list(pairs.filter(pk__gt=last).values_list("pk", flat=True)[:size])
        if not pks:
            return
        yield last, pks[-1]
        last = pks[-1]


def _as_dict(stored) -> dict:
    """Stored JSON metadata as a dict, {} for anything else: JSON text as SQLite returns it, or already decoded."""
    if isinstance(stored, str):
        stored = json.loads(stored) if stored not in ("", "{}") else {}
    return stored if isinstance(stored, dict) else {}


def _distinct_metadata(stored) -> tuple[np.ndarray, list[dict]]:
    """(each row's code, the distinct metadata as dicts): a corpus of 400,000 pairs repeats a handful of them,
    so each is decoded once. SQLite gives the JSON text, PostgreSQL the decoded value (keyed by its JSON)."""
    texts = [text if isinstance(text, str) else json.dumps(text, sort_keys=True) for text in stored]
    codes, distinct = pd.factorize(np.array(texts, dtype=object))
    return codes, [_as_dict(text) for text in distinct]


def pair_table(campaigns, pk_range: PkRange | None = None, hypotheses=True) -> pd.DataFrame:
    """One row per real pair (no training pair, no control item), by campaign then age; `pk_range`: one page.

    Columns: `pk`, `campaign` (its slug), `external_id`, `corpus` (as stored), `source`,
    `hypothesis` (unless `hypotheses` is False), `gold_label` (Int64), the metadata keys of METADATA_COLUMNS
    and `system` (after each campaign's `system_keys`).
    """
    campaigns = list(campaigns)
    slug_of = {c.pk: c.slug for c in campaigns}
    keys_of = {c.slug: c.system_key_list() for c in campaigns}
    read = [column for column in PAIR_TABLE_COLUMNS if hypotheses or column != "hypothesis"]
    fields = ["campaign_id" if column == "campaign" else column for column in read]
    rows = _within(_real_pairs(campaigns), pk_range).order_by("campaign_id", "pk").values_list(*fields, "metadata")
    # Read a chunk at a time: 400,000 rows of sentences as tuples were 350 MB at once.
    columns = [*read, "metadata"]
    chunks = [pd.DataFrame.from_records(chunk, columns=columns) for chunk in raw_row_chunks(rows)]
    pairs = pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame.from_records([], columns=columns)
    codes, metadatas = _distinct_metadata(pairs.pop("metadata").to_numpy(dtype=object))
    # Columns built as `from_records` infers them (strings as pandas' string dtype), the campaign's slug first.
    pairs["campaign"] = pd.Series(pairs["campaign"].map(slug_of).tolist(), index=pairs.index)
    values = [tuple(metadata.get(key) for key in METADATA_COLUMNS) for metadata in metadatas]
    distinct = pd.DataFrame.from_records(values, columns=METADATA_COLUMNS)
    pairs[list(METADATA_COLUMNS)] = distinct.take(codes).set_axis(pairs.index)
    pairs["gold_label"] = pairs["gold_label"].astype("Int64")
    pairs["system"] = pd.Series("", index=pairs.index, dtype=object)
    for slug, keys in keys_of.items():
        rows_of_campaign = (pairs["campaign"] == slug).to_numpy()
        if rows_of_campaign.any():
            # Named once per distinct metadata of the campaign (in order of appearance), then spread to its pairs.
            own = np.unique(codes[rows_of_campaign])
            names = system_names(pd.DataFrame([metadatas[code] for code in own], index=range(len(own))), keys)
            pairs.loc[rows_of_campaign, "system"] = names.to_numpy()[np.searchsorted(own, codes[rows_of_campaign])]
    return pairs


def report_work(campaigns) -> dict[str, int]:
    """What a report of `campaigns` costs beyond its pairs: distinct systems, groups (corpora, generators, templates).

    Read from the pairs' corpus and metadata only, so a page can decide cheaply whether to compute the report.
    """
    campaigns = list(campaigns)
    keys_of = {c.pk: c.system_key_list() for c in campaigns}
    rows = raw_rows(_real_pairs(campaigns).values_list("campaign_id", "corpus", "metadata"))
    corpora, metadatas = set(), {c.pk: [] for c in campaigns}
    for campaign_id, corpus, metadata in rows:
        corpora.add((campaign_id, corpus))
        metadata = _as_dict(metadata)
        wanted = keys_of[campaign_id] or ["system", *METADATA_COLUMNS]
        metadatas[campaign_id].append({key: metadata.get(key) for key in {*wanted, *METADATA_COLUMNS}})
    systems, groups = set(), {key: set() for key in METADATA_COLUMNS}
    for campaign_id, chosen in metadatas.items():
        frame = pd.DataFrame(chosen)
        if frame.empty:
            continue
        systems |= set(system_names(frame, keys_of[campaign_id])) - {""}
        for key in METADATA_COLUMNS:
            groups[key] |= set(frame[key].dropna().astype(str))
    return {"systems": len(systems), "groups": len(corpora) + sum(len(values) for values in groups.values())}


def corpus_names(table: pd.DataFrame) -> pd.Series:
    """Each pair's corpus as reports and exports name it: as imported, else its campaign's slug."""
    return table["corpus"].where(table["corpus"].fillna("").astype(bool), table["campaign"])


def pair_metadata(campaign, pk_range: PkRange | None = None):
    """(public id, metadata) of the campaign's real pairs, oldest first; `pk_range`: one page."""
    return _within(campaign.real_pairs, pk_range).order_by("pk").values_list("external_id", "metadata")


def pair_systems(campaign) -> dict[str, str]:
    """Each real pair's system by its public id (training pairs and control items have none)."""
    table = pair_table([campaign])
    return dict(zip(table["external_id"], table["system"]))


def counted_judgments(campaigns, include_excluded=False, *, answer_key=None, values=False, pk_range=None):
    """The judgments results are made of (`Judgment.objects.counted`): `pair_pk`, `judge`, `english_level`, then
    `answer` (`ANSWER_COLUMN`: the value at `answer_key` of each one's `Judgment.values`) and `values` (the whole
    answer, to read and never change in place) where asked.

    `judge` is the judge's public pseudonym; training answers, control items and, unless
    asked, the judges a researcher excluded are left out. `pk_range`: those of one page of pairs.
    Answers are read in SQL as JSON text and each distinct text decoded once (a report of a million
    judgments reads a few distinct 5-way answers; one that reads only them never reads whole documents).
    """
    fields, columns = ["pair_id", "judge_id", "judge__english_level"], ["pair_pk", "judge", "english_level"]
    if answer_key is not None:
        fields, columns = [*fields, JsonKeyText("values", answer_key)], [*columns, ANSWER_COLUMN]
    if values:
        fields, columns = [*fields, Cast("values", TextField())], [*columns, "values"]
    rows = list(
        _within(Judgment.objects.filter(pair__campaign__in=list(campaigns)), pk_range, field="pair_id")
        .counted(include_excluded)
        .order_by("pk")
        .values_list(*fields)
    )
    # Column by column: the JSON texts are decoded from Python's tuples (iterating a frame's column of text, kept
    # in Arrow, costs more than the decoding).
    read = zip(*rows) if rows else [()] * len(columns)
    judgments = pd.DataFrame(
        {
            column: pd.Series(decoded_json(values), dtype=object) if column in (ANSWER_COLUMN, "values") else values
            for column, values in zip(columns, read)
        },
        columns=columns,
    )
    judgments["judge"] = _pseudonyms(judgments["judge"])
    return judgments


def _pseudonyms(judge_pks: pd.Series) -> pd.Series:
    """Each judge's public pseudonym, made once per judge (a `Judge` made per judgment took most of a report's
    reading of a million judgments: its default token is drawn at every instantiation)."""
    pseudonyms = {pk: Judge.pseudonym_of(pk) for pk in set(judge_pks)}
    return pd.Series([pseudonyms[pk] for pk in judge_pks], index=judge_pks.index, dtype=object)


def judgments_with_votes(campaigns, values=False, include_excluded=False) -> pd.DataFrame:
    """`counted_judgments` with each one's answer (`answer`, as the campaigns' task type's `Vote` reads it: None
    without one), `values` where asked, and the vote columns (`vote`, `abstained`, `rating`) the type declares.

    Campaigns compared in one report share a type; the first one's declaration reads them all.
    """
    vote = task_type_of(campaigns[0]).vote if campaigns else None
    judgments = counted_judgments(campaigns, include_excluded, answer_key=vote.key if vote else None, values=values)
    if vote is None:
        judgments[ANSWER_COLUMN] = pd.Series(None, index=judgments.index, dtype=object)
    columns = ["pair_pk", "judge", "english_level", ANSWER_COLUMN, *(["values"] if values else []), *VOTE_COLUMNS]
    return with_votes(judgments, vote)[columns]


JUDGMENT_LOG_FIELDS = {
    "judge": "judge_id",
    "english_level": "judge__english_level",
    "pair_id": "pair__external_id",
    "corpus": "pair__corpus",
    "values": "values",
    "is_training": "is_training",
    "is_control": "pair__is_control",
    "judge_excluded": "judge__excluded",
    "top_sentence": "assignment__top",
    "response_ms": "response_ms",
    "shown_at": "assignment__shown_at",
    "answered_at": "created_at",
}


def judgment_log(campaign, judgments=None) -> pd.DataFrame:
    """Every judgment of a campaign, training and excluded judges included (flagged), oldest first.

    One column per key of JUDGMENT_LOG_FIELDS, each holding the values as the database gives
    them (object dtype: times stay datetimes, missing values None); `judge` is the pseudonym.
    `judgments` restricts the log to a subset of them (a page).
    """
    judgments = Judgment.objects.filter(pair__campaign=campaign) if judgments is None else judgments
    rows = list(judgments.order_by("created_at", "pk").values_list(*JUDGMENT_LOG_FIELDS.values()))
    columns = zip(*rows) if rows else [()] * len(JUDGMENT_LOG_FIELDS)
    frame = pd.DataFrame({name: pd.Series(values, dtype=object) for name, values in zip(JUDGMENT_LOG_FIELDS, columns)})
    frame["judge"] = _pseudonyms(frame["judge"])
    frame["corpus"] = corpus_names(frame.assign(campaign=campaign.slug))
    return frame


def judgment_log_pages(campaign, size: int) -> Iterator[pd.DataFrame]:
    """`judgment_log` in pages of at most `size` judgments, oldest first (keyset on created_at, pk)."""
    judgments = Judgment.objects.filter(pair__campaign=campaign).order_by("created_at", "pk")
    page = judgments
    while True:
        keys = list(page.values_list("created_at", "pk")[:size])
        if not keys:
            return
        yield judgment_log(campaign, judgments.filter(pk__in=[pk for _at, pk in keys]))
        at, pk = keys[-1]
        page = judgments.filter(Q(created_at__gt=at) | Q(created_at=at, pk__gt=pk))


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


def _real_scores(campaigns):
    return Score.objects.filter(pair__campaign__in=list(campaigns), pair__is_training=False, pair__is_control=False)


def metric_signatures(campaigns) -> tuple[dict[str, str], list[str]]:
    """Each metric's most recent signature among the scores of `campaigns`, and notes naming the older ones ignored."""
    return _signatures_and_notes(_signature_groups(campaigns))


def _signatures_and_notes(groups):
    signatures, notes = {}, []
    for metric, (used, *others) in groups.items():
        signatures[metric] = used["signature"]
        if others:
            ignored = "; ".join(f"{g['signature']} ({g['n']} scores)" for g in others)
            notes.append(f"{title_of(metric)}: using the most recent signature {used['signature']}; ignored {ignored}.")
    return signatures, notes


# Above this many other pairs among a campaign's pk range, its scores are read through the join instead.
MAX_EXCLUDED_IN_SPAN = 5_000


def pair_pk_range(campaigns):
    """`real_pair_pk_range` of the campaigns' real pairs, read from the `pair_state` index alone."""
    return real_pair_pk_range(campaigns, pair_state(campaigns))


def score_groups(campaigns, pk_range, counted=None) -> dict:
    """The signature groups of the campaigns' real scores (`campaigns.scores.signature_groups`), through `pk_range`
    when there is one; `counted`: how `signature_groups_in` counts them (e.g. in worker processes)."""
    if pk_range is None:
        return signature_groups(_real_scores(campaigns))
    return signature_groups_in(pk_range, counted)


def pair_state(campaigns) -> dict:
    """Count and pk bounds of the real pairs, read from the `pair_state` index alone."""
    return _real_pairs(campaigns).aggregate(n=Count("pk"), first=Min("pk"), last=Max("pk"))


def real_pair_pk_range(campaigns, pairs):
    """(after, last, excluded pks): the real pairs of `campaigns` as a pk range less the other pairs inside it.

    None when the range holds too many other pairs (campaigns imported in turns) to be worth it.
    An import allocates a campaign's pks in a row, so usually nothing is excluded and no pair is read.
    `pairs`: their `pair_state`.
    """
    if not pairs["n"]:
        return 0, 0, []
    first, last, excluded = pairs["first"], pairs["last"], []
    if last - first + 1 != pairs["n"]:
        inside = Pair.objects.filter(pk__gte=first, pk__lte=last)
        others = inside.exclude(campaign__in=list(campaigns), is_training=False, is_control=False)
        excluded = list(others.values_list("pk", flat=True)[: MAX_EXCLUDED_IN_SPAN + 1])
        if len(excluded) > MAX_EXCLUDED_IN_SPAN:
            return None
    return first - 1, last, excluded


def _signature_groups(campaigns):
    return score_groups(campaigns, pair_pk_range(campaigns))


def latest_metric_scores(campaigns, signatures=None, pk_range=None) -> Scores:
    """Scores of the real pairs of `campaigns`, one column per metric; older signatures are named in `notes`.

    Given `signatures` (of `metric_signatures`), only the pairs of `pk_range` are read: one page of an export.
    """
    if signatures is None and pk_range is None:
        pk_range = pair_pk_range(campaigns)
        if pk_range is not None:
            groups = score_groups(campaigns, pk_range)
            return scores_of(groups, {metric: read_column(pk_range, found[0]) for metric, found in groups.items()})
    notes = []
    if signatures is None:
        signatures, notes = metric_signatures(campaigns)
    columns = values_under(_within(_real_scores(campaigns), pk_range, field="pair_id"), signatures)
    columns = {metric: _value_series(rows) for metric, rows in columns.items() if rows}
    return Scores(_wide(columns, signatures), signatures, notes)


def scores_of(groups, columns) -> Scores:
    """`Scores` of each metric's column (`columns`) under its most recent signature (`groups`)."""
    signatures, notes = _signatures_and_notes(groups)
    return Scores(_wide(columns, signatures), signatures, notes)


def _wide(columns, signatures):
    wide = pd.DataFrame({metric: column for metric, column in columns.items() if len(column)})
    wide = wide.reindex(columns=list(signatures))
    wide.index.name = None
    return wide


def read_column(pk_range, group, newer_than=0) -> pd.Series:
    """One metric's column under one signature (a `score_groups` group) over `pk_range`, indexed by pair pk;
    `newer_than`: only the scores of higher id."""
    if newer_than:
        return _value_series(values_in(pk_range, group["metric"], group["signature"], newer_than=newer_than))
    return _read_column(pk_range, group["metric"], group["signature"], group["n"])


def _read_column(pk_range, metric, signature, n):
    after, last, excluded = pk_range
    if n == last - after and not excluded:  # every pair of the range scored: its pks need not be read
        rows = values_by_pair(pk_range, metric, signature)
        values = np.fromiter(chain.from_iterable(rows), dtype=float, count=len(rows))  # a fifth of np.array's time
        return pd.Series(values, index=np.arange(after + 1, last + 1, dtype=np.int64))
    return _value_series(values_in(pk_range, metric, signature))


def _value_series(rows) -> pd.Series:
    """[(pair_pk, value), ...] as a float Series indexed by pair pk."""
    if not rows:
        return pd.Series(dtype=float, index=pd.Index([], dtype=np.int64))
    table = np.array(rows, dtype=float)  # one C-level pass; pks are exact as floats below 2**53
    return pd.Series(table[:, 1], index=table[:, 0].astype(np.int64))


def latest_metric_details(campaigns, signatures=None, pk_range=None) -> pd.DataFrame:
    """The evidence metrics keep per pair (an LLM oracle's raw answers), of each metric's most recent signature.

    Columns `pair_pk`, `metric`, `details` (the stored JSON); metrics that keep none have no rows.
    `signatures` and `pk_range` as in `latest_metric_scores`.
    """
    rows = latest_details(_within(_real_scores(campaigns), pk_range, field="pair_id"), signatures)
    return pd.DataFrame.from_records(rows, columns=["pair_pk", "metric", "details"])


@dataclass
class Frames:
    """The analysis's inputs for a set of campaigns, and which signature each metric column uses."""

    pairs: pd.DataFrame
    judgments: pd.DataFrame
    directions: dict[str, str]
    signatures: dict[str, str]
    notes: list[str] = field(default_factory=list)
    verdicts: pd.DataFrame = field(default_factory=pd.DataFrame)  # the LLM oracle's, from Score.details

    @property
    def answers(self) -> dict[str, str]:
        """Per ParaPLUIE column, its yes/no answer setting as its signature records it ("Yes/No:10539/5230")."""
        parsed = {metric: parse_signature(line) for metric, line in self.signatures.items()}
        return {metric: fields["answer"] for metric, fields in parsed.items() if "answer" in fields}


def load_frames(
    campaigns, values=False, hypotheses=True, pairs=None, scores=None, selection=None, edit_distances=None
) -> Frames:
    """Real pairs (with one column per metric), counted judgments, metric directions and signatures.

    With several campaigns a pair's id is `slug:id`; a pair without corpus is in its campaign's.
    The judgments frame holds each one's `answer` and the vote columns (`annotation.votes.VOTE_COLUMNS`) as the
    campaigns' task type declares them, and with `values` each one's whole answer (`Judgment.values`).
    `hypotheses=False` (the report): each pair's edit distance to its source in place of its hypothesis.
    `pairs` ((frame, pks) as `pairs_frame` gives them) and `scores` (a function giving `Scores`, called
    once the judgments are read): when the caller read them otherwise (the live report, from its cache);
    `selection` likewise (`generation_selection`: it reads every pair's metadata); `edit_distances`: as
    `pairs_frame` takes it.
    """
    campaigns = list(campaigns)
    if pairs is None:
        pairs = pairs_frame(campaigns, hypotheses, edit_distances)
    pairs, pks = pairs
    pair_id_of_pk = pd.Series(pairs["pair_id"].to_numpy(), index=pks)

    judgments = judgments_with_votes(campaigns, values)
    judgments.insert(0, "pair_id", judgments.pop("pair_pk").map(pair_id_of_pk))

    scores = scores() if scores is not None else latest_metric_scores(campaigns)
    directions, notes = _directions(scores.signatures)
    pairs = pairs.join(scores.wide.reindex(pks).set_axis(pairs.index))
    pairs = _with_active_choice(campaigns, pairs, pks)
    found = generation_selection(campaigns) if selection is None else selection
    pairs = _with_generation_selection(pairs, pks, found)
    overlap_notes = [note for note in (campaign.overlap_note() for campaign in campaigns) if note]
    details = latest_metric_details(campaigns, scores.signatures)
    verdicts = verdicts_frame(zip(details["pair_pk"].map(pair_id_of_pk), details["metric"], details["details"]))
    return Frames(pairs, judgments, directions, scores.signatures, scores.notes + notes + overlap_notes, verdicts)


def pairs_frame(campaigns, hypotheses=True, edit_distances=None):
    """The pairs as the analysis reads them and their pks (row for row); `hypotheses=False`: each pair's
    edit distance in place of its hypothesis (the hypotheses are read once, for the distances).

    `edit_distances` (with `hypotheses=False`): a function giving the distances by pair pk, computed
    meanwhile by others (the `report` command's workers, `read_edit_distances`): no hypothesis is read
    here but those of the pairs it lacks (added since its pk range was read).
    """
    if hypotheses:
        return _pairs_frame(list(campaigns))
    if edit_distances is None:
        return _with_edit_distances(*_pairs_frame(list(campaigns)))
    pairs, pks = _pairs_frame(list(campaigns), hypotheses=False)
    distances = edit_distances().reindex(pks)
    lacking = pks[distances.isna().to_numpy()]
    for start in range(0, len(lacking), LACKING_PER_QUERY):  # a bounded IN (...) each
        part = lacking[start : start + LACKING_PER_QUERY]
        distances.loc[part] = _edit_distances_of(Pair.objects.filter(pk__in=part.tolist())).reindex(part)
    pairs["edit_distance"] = distances.to_numpy()
    return pairs, pks


def read_edit_distances(pk_range: PkRange) -> pd.Series:
    """Each real pair's edit distance over `pk_range` (after, last, excluded pks: `real_pair_pk_range`, or a
    part of it), indexed by pk: the `report` command's workers compute them while it reads the pairs."""
    after, last, excluded = pk_range
    pairs = Pair.objects.filter(pk__gt=after, pk__lte=last)
    return _edit_distances_of(pairs.exclude(pk__in=excluded) if excluded else pairs)


def _edit_distances_of(pairs) -> pd.Series:
    """`analysis.tables.edit_distances` of these pairs, indexed by pk, their sentences read a chunk at a time."""
    pks, distances = [np.empty(0, dtype=np.int64)], [np.empty(0)]
    for chunk in raw_row_chunks(pairs.order_by("pk").values_list("pk", "source", "hypothesis")):
        pks.append(np.fromiter((row[0] for row in chunk), dtype=np.int64, count=len(chunk)))
        distances.append(edit_distances([row[1] for row in chunk], [row[2] for row in chunk]))
    return pd.Series(np.concatenate(distances), index=np.concatenate(pks))


def split_pk_range(pk_range: PkRange, parts: int) -> list[PkRange]:
    """`pk_range` (after, last, excluded) cut into `parts` consecutive ranges of about as many pks."""
    after, last, excluded = pk_range
    bounds = np.linspace(after, last, parts + 1).round().astype(int).tolist()
    return [(low, high, excluded) for low, high in zip(bounds, bounds[1:]) if high > low]


def _with_active_choice(campaigns, pairs, pks):
    """With active choice: each pair's `choice_probability`, whether it was `chosen` and its `choice_wave` (the
    estimates weight by them); empty for a pair in no wave drawn yet."""
    active = [c for c in campaigns if c.active_choice]
    if not active:
        return pairs
    drawn = Pair.objects.filter(campaign__in=active, choice_wave__isnull=False)
    found = {pk: (p, c, w) for pk, p, c, w in drawn.values_list("pk", "choice_probability", "chosen", "choice_wave")}
    design = [found.get(pk, (np.nan, None, None)) for pk in pks]
    return pairs.assign(
        choice_probability=[np.nan if p is None else p for p, _c, _w in design],
        chosen=pd.array([c for _p, c, _w in design], dtype="boolean"),
        choice_wave=pd.array([w for _p, _c, w in design], dtype="Int64"),
    )


def generation_selection(campaigns) -> dict:
    """pk -> metadata of the candidates a generation run's selection stage decided (a scan of every pair's
    metadata: the live report keeps it with the pairs, under their version)."""
    decided = Pair.objects.filter(campaign__in=campaigns, metadata__has_key="selected")
    return {pk: _as_dict(metadata) for pk, metadata in decided.values_list("pk", "metadata")}


def _with_generation_selection(pairs, pks, found):
    """Candidates of a generation run's selection stage (`found`): whether each was `selected` and
    `sent_to_judges` (NA for other pairs), and a ParaTag collection round's facts (`ROUND_KEYS`)."""
    if not found:
        return pairs
    empty = {}
    rows = [found.get(pk, empty) for pk in pks]
    columns = {
        flag: pd.array([_flag(row.get(flag)) for row in rows], dtype="boolean")
        for flag in ("selected", "sent_to_judges")
    }
    if any("collection_round" in row for row in found.values()):
        columns |= {key: [row.get(key) for row in rows] for key in ROUND_KEYS}
    return pairs.assign(**columns)


def _flag(value):
    """A stored yes/no: JSON's true/false as generation writes it, or the text an imported export holds."""
    if isinstance(value, bool) or value is None:
        return value
    return {"true": True, "false": False, "1": True, "0": False}.get(str(value).strip().lower())


def _pairs_frame(campaigns, hypotheses=True):
    """The pairs as the analysis reads them, and their pks (row for row); their hypotheses unless `hypotheses`
    is False."""
    table = pair_table(campaigns, hypotheses=hypotheses)
    several = len(campaigns) > 1
    pair_ids = table["campaign"] + ":" + table["external_id"] if several else table["external_id"]
    sentences = ("source", "hypothesis") if hypotheses else ("source",)
    pairs = pd.DataFrame(
        {
            "pair_id": pair_ids,
            "corpus": corpus_names(table),
            **{column: table[column] for column in (*sentences, "gold_label", *METADATA_COLUMNS, "system")},
        }
    )
    return pairs, table["pk"].to_numpy()


def _with_edit_distances(pairs, pks):
    """The hypotheses are read once, for the edit distances; dropping them halves the sentences kept."""
    pairs["edit_distance"] = edit_distances(pairs["source"].tolist(), pairs.pop("hypothesis").tolist())
    return pairs, pks


def _directions(metrics):
    """Each metric's direction from the registry; a name it does not know is assumed higher-is-closer, with a note."""
    directions, notes = {}, []
    for metric in metrics:
        if metric not in METRICS:
            notes.append(f"{metric} is not a registered metric: assumed higher-is-closer.")
        directions[metric] = direction_of(metric) if metric in METRICS else "higher"
    return directions, notes


def label_sources_with_labels(campaigns) -> dict[str, bool]:
    """Whether each label source has anything to offer: a counted judgment (human and the crowd-aware
    sources), a gold label (gold)."""
    campaigns = list(campaigns)
    pairs = Pair.objects.filter(campaign__in=campaigns, is_training=False, is_control=False)
    # Through the judgment's own pair (a join from the few judgments), never a scan of the pairs.
    judged = Judgment.objects.filter(pair__campaign__in=campaigns).counted().exists()
    # The crowd-aware sources model the same judgments as the majority.
    return {"human": judged, "gold": pairs.filter(gold_label__isnull=False).exists()} | dict.fromkeys(
        CROWD_SOURCES, judged
    )


def metric_columns(campaign, signatures=None, pk_range=None) -> tuple[pd.DataFrame, dict[str, str]]:
    """Per-pair metric scores of one campaign keyed by the pair's public id (`pair_id`), and each column's signature.

    `signatures` and `pk_range` as in `latest_metric_scores`.
    """
    scores = latest_metric_scores([campaign], signatures, pk_range)
    ids = pd.Series(dict(_within(campaign.real_pairs, pk_range).values_list("pk", "external_id")), dtype=object)
    wide = scores.wide.reset_index(drop=True)
    wide.insert(0, "pair_id", scores.wide.index.map(ids).astype(object))
    return wide, scores.signatures


def metric_details(campaign, signatures=None, pk_range=None) -> pd.DataFrame:
    """`latest_metric_details` of one campaign keyed by the pair's public id: `pair_id`, `metric`, `details`."""
    details = latest_metric_details([campaign], signatures, pk_range)
    ids = pd.Series(dict(_within(campaign.real_pairs, pk_range).values_list("pk", "external_id")), dtype=object)
    details.insert(0, "pair_id", details.pop("pair_pk").map(ids).astype(object))
    return details


def metrics_with_details(campaign, signatures) -> list[str]:
    """The metrics of `signatures` whose scores keep details in this campaign, in the order of `signatures`."""
    kept = set(
        _real_scores([campaign])
        .filter(details__isnull=False, metric__in=list(signatures))
        .values_list("metric", flat=True)
        .distinct()
    )
    return [metric for metric in signatures if metric in kept]


def _public_ids(campaign) -> pd.Series:
    return pd.Series(dict(campaign.real_pairs.values_list("pk", "external_id")), dtype=object)
