"""The report's frames read through the store and the workers, from the plain readers of `reports.frames`.

What is read from the database is kept under the data versions of the parts it reads
(`reports.models.DataVersion`, advanced by the database itself on every write) and the code digest:
- the pairs (edit distances in place of hypotheses, with each column's digest): `pairs`;
- the scores' signature groups: `pairs`, `scores_added`, `scores_changed`;
- each metric's column: `pairs`, `scores_changed` (scores only added since are read on top of the kept
  column, by id: the group's count says whether that adds up).
A database read cannot be digested without reading it: these parts, declared beside each read
(`*_READS`), are what its key is made of, with the read's name and arguments.
"""

from dataclasses import dataclass
from functools import partial

import pandas as pd

from reports import frames
from reports.machinery.digests import digest
from reports.machinery.memory import Memory
from reports.machinery.store import CACHE_SECONDS
from reports.models import DataVersion

PAIRS_READS = ("pairs",)
GROUPS_READS = ("pairs", "scores_added", "scores_changed")
COLUMN_READS = ("pairs", "scores_changed")


@dataclass
class DataState:
    """What a report of some campaigns is computed from, read cheaply (no score, no sentence is read).

    `versions`: the campaigns' data versions, read first; `pk_range`: `frames.real_pair_pk_range`;
    `groups`: the scores' signature groups (`frames.score_groups`).
    """

    versions: tuple
    pk_range: tuple | None
    groups: dict

    def versions_of(self, parts=None) -> tuple:
        """The versions of `parts` (all without any): what a result reading those parts is kept under."""
        return tuple(found for found in self.versions if parts is None or found[1] in parts)


def data_state(campaigns, store=None, workers=None) -> DataState:
    """The campaigns' `DataState`; `store` keeps the signature groups per data version; `workers`
    (`reports.machinery.workers.ReportWorkers`) count them at once."""
    campaigns = list(campaigns)
    versions = DataVersion.of(campaigns)  # before the data: a write committed meanwhile is a newer version
    state = DataState(versions, None, {})
    # The count and pk bounds of the real pairs: an index scan of every pair (0.16 s at 400,000), kept.
    pairs = kept(store, state, PAIRS_READS, frames.pair_state, campaigns)
    state.pk_range = pk_range = frames.real_pair_pk_range(campaigns, pairs)
    counted = workers.queries() if workers is not None else None
    state.groups = kept(
        store,
        state,
        GROUPS_READS,
        frames.score_groups,
        campaigns,
        pk_range,
        counted=counted,
        inputs=(digest(pk_range),),
    )
    return state


def kept(store, state, parts, read, *args, inputs=(), **kwargs):
    """`read(*args, **kwargs)`, kept in `store` under the read's name, the versions of the `parts` it reads,
    `inputs` (what else it depends on: its arguments stand for those parts) and the code digest."""
    if store is None:
        return read(*args, **kwargs)
    key = store.key(f"{read.__module__}.{read.__qualname__}", state.versions_of(parts), inputs)
    return store.get_or_set(key, lambda: read(*args, **kwargs), CACHE_SECONDS)


@dataclass
class ReportFrames:
    frames: frames.Frames
    known_digests: dict  # column name of the pairs -> its digest, for the pair columns read with their digests

    def memory(self, store=None, workers: int = 0) -> Memory:
        """The `Memory` that runs the report's steps on these frames, knowing the digests read with the pairs."""
        memory = Memory(store, workers)
        for name, found in self.known_digests.items():
            memory.digests.know(self.frames.pairs[name], found)
        return memory


def report_frames(campaigns, store=None, state=None, workers=None) -> ReportFrames:
    """The report's `Frames` (edit distances in place of hypotheses): pairs and score columns from `store`
    where they did not change, else read (the score columns by `workers`, while this process reads the pairs).
    `state`: the campaigns' `DataState`, when already read (the page reads it for the report's key)."""
    campaigns = list(campaigns)
    if store is None and workers is None:
        return ReportFrames(frames.load_frames(campaigns, hypotheses=False), {})
    state = state or data_state(campaigns, store, workers)
    if store is None:
        # Started before the pairs are read: the edit distances first (needed first, and the longest).
        distances = _edit_distances_in_workers(state, workers)
        scores = _scores_in_workers(state, workers) or _scores_read_here(state)
        loaded = frames.load_frames(campaigns, hypotheses=False, scores=scores, edit_distances=distances)
        return ReportFrames(loaded, {})
    pairs, pks, known_digests, selection = kept(store, state, PAIRS_READS, _pairs_with_digests, campaigns)
    scores = partial(_kept_scores, state, store) if state.pk_range is not None else None
    loaded = frames.load_frames(campaigns, hypotheses=False, pairs=(pairs, pks), scores=scores, selection=selection)
    return ReportFrames(loaded, known_digests)


def _pairs_with_digests(campaigns):
    """The pairs as the report reads them, with the digest of each column (`Digests.know`: the live report
    then hashes none of them again), and the generation selection read from their metadata."""
    pairs, pks = frames.pairs_frame(campaigns, hypotheses=False)
    return pairs, pks, {name: digest(pairs[name]) for name in pairs.columns}, frames.generation_selection(campaigns)


def _scores_in_workers(state, workers):
    """The function returning the `Scores`, each column being read by `workers` from now on;
    None where they may not query or the pairs form no pk range (the scores are then read here)."""
    if not workers.can_query or state.pk_range is None:
        return None
    read = {
        metric: workers.query(frames.read_column, state.pk_range, found[0]) for metric, found in state.groups.items()
    }
    return partial(_scores_of_futures, state.groups, read)


def _edit_distances_in_workers(state, workers):
    """The function returning the edit distances by pair pk, a part of the pk range computed by each of
    `workers` from now on; None where they may not query or the pairs form no pk range (computed here)."""
    if not workers.can_query or state.pk_range is None:
        return None
    parts = frames.split_pk_range(state.pk_range, workers.count)
    return partial(_distances_of_futures, [workers.query(frames.read_edit_distances, part) for part in parts])


def _distances_of_futures(parts) -> pd.Series:
    return pd.concat([part.result() for part in parts]) if parts else pd.Series(dtype=float)


def _scores_of_futures(groups, read):
    return frames.scores_of(groups, {metric: column.result() for metric, column in read.items()})


def _scores_read_here(state):
    """The function reading the `Scores` of the groups already counted; None without a pk range (read as usual)."""
    if state.pk_range is None:
        return None
    return lambda: frames.scores_of(
        state.groups, {m: frames.read_column(state.pk_range, g[0]) for m, g in state.groups.items()}
    )


def _kept_scores(state, store):
    return frames.scores_of(
        state.groups, {metric: _column(state, found[0], store) for metric, found in state.groups.items()}
    )


def _column(state, group, store) -> pd.Series:
    """One metric's column under one signature: from the store when its state is known, else read (and stored).

    The stored column is kept while no pair and no score of the campaigns was updated or deleted (their
    versions); scores only added since, it is completed with the scores of higher id; if that does not
    add up to the count (an insert committed out of id order), the whole column is read again.
    """
    n, latest = group["n"], group["latest"]
    key = store.key(
        "column", state.versions_of(COLUMN_READS), digest((state.pk_range, group["metric"], group["signature"]))
    )
    kept_column = store.get(key)
    if kept_column is not None and (kept_column["n"], kept_column["latest"]) == (n, latest):
        return kept_column["column"]
    column = None
    if kept_column is not None and kept_column["n"] < n:
        added = frames.read_column(state.pk_range, group, newer_than=kept_column["latest"])
        if len(kept_column["column"]) + len(added) == n:
            column = pd.concat([kept_column["column"], added])
    if column is None:
        column = frames.read_column(state.pk_range, group)
    if len(column) == n:
        store.set(key, {"n": n, "latest": latest, "column": column}, CACHE_SECONDS)
    return column
