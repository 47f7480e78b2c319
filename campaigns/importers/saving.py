"""Saving: id allocation and an all-or-nothing write of validated rows into a campaign.

`import_pairs` streams a file through `parsing.iter_corpus` and inserts chunks of rows
inside one transaction, so a large file is never held in memory and a bad file, even one
bad on its last line, imports nothing; `import_rows` does the same for rows given as dicts.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DataError, IntegrityError, transaction

from campaigns.models import Pair
from campaigns.signals import pairs_created
from parasol.db import forget_logged_queries
from scoring.metrics.filters import bleu_range_problem, paratag_reason

from . import readers
from .errors import CorpusConflictError, CorpusImportError
from .parsing import iter_corpus
from .readers import Source, limit_rows
from .validation import PairRow, rows_of_records

# Numbers given to id-less rows continue after the largest numeric id; longer
# "numbers" are ids like any other (they would overflow the id column).
NUMBERED_ID_MAX_DIGITS = 18


@dataclass
class ImportResult:
    count: int
    corpora: list[str]
    # Rows left out by a filter (ParaTag's BLEU range): (location, reason).
    rejected: list[tuple[str, str]] = field(default_factory=list)


def import_pairs(
    campaign, data: Source, *, format="auto", filename="", corpus="", progress=None, bleu_range=None
) -> ImportResult:
    """Parse a file and import all its pairs into the campaign, or none of them.

    `data` is the file's bytes or a seekable binary file, streamed either way;
    `progress(bytes_read)` reports how far the reading got. With `bleu_range` (low, high),
    ParaTag's filters (section 4.1) apply: only pairs whose BLEU lies strictly inside and whose
    lengths pass are imported; the others are returned in `rejected` with the reason.
    """
    rows = iter_corpus(data, format=format, filename=filename, default_corpus=corpus, progress=progress)
    rejected = []
    if bleu_range is not None:
        problem = bleu_range_problem(*bleu_range)
        if problem:
            raise CorpusImportError(problem)
        rows = _passing_paratag_filters(rows, *bleu_range, rejected)
    result = _save_rows(campaign, rows)
    if result.count == 0 and rejected:
        location, reason = rejected[0]
        raise CorpusImportError(
            f"no pair passes ParaTag's filters (BLEU inside ({bleu_range[0]:g}, {bleu_range[1]:g}), lengths); "
            f"first: {location}: {reason}"
        )
    result.rejected = rejected
    return result


def _passing_paratag_filters(rows, low, high, rejected):
    """Rows with BLEU strictly inside (low, high) and ParaTag's lengths; (location, reason) of others to `rejected`."""
    for row in rows:
        try:
            reason = paratag_reason(row.source, row.hypothesis, low, high)
        except ValueError as error:
            raise CorpusImportError(str(error)) from None
        if reason is None:
            yield row
        else:
            rejected.append((row.location, reason))


def import_rows(campaign, rows, *, corpus="") -> ImportResult:
    """Import pairs given as dicts (as in JSONL: source, hypothesis, id, label, corpus, metadata)."""
    # Counted whole first: a row past the limit is refused before any row is checked.
    records = list(limit_rows((f"row {number}", row) for number, row in enumerate(rows, start=1)))
    parsed = rows_of_records(records, default_corpus=corpus, empty_message="no pairs were given")
    return _save_rows(campaign, parsed)


def _save_rows(campaign, rows: Iterable[PairRow]) -> ImportResult:
    """Insert rows chunk by chunk in one transaction: any error, even on the last row, rolls all back."""
    count, corpora, pair_pks = 0, set(), []
    try:
        with transaction.atomic():
            ids = _IdAllocator(campaign)
            chunk_rows = readers.IMPORT_CHUNK_ROWS
            for chunk in _chunks(rows, chunk_rows):
                created = Pair.objects.bulk_create([ids.pair_of(row) for row in chunk], batch_size=chunk_rows)
                ids.chunk_stored()
                forget_logged_queries()
                pair_pks += [pair.pk for pair in created]
                count += len(chunk)
                corpora.update(row.corpus for row in chunk)
            pairs_created.send(sender=Pair, campaign=campaign, pair_pks=pair_pks)
    except IntegrityError:
        # Only a concurrent import into the same campaign can get here: ids were checked above.
        raise CorpusConflictError(
            "another import added pairs with the same ids at the same time; nothing was imported, try again"
        ) from None
    except DataError as error:
        # A value the checks above let through but the database refuses: still the
        # uploader's file, so a message rather than a 500; the transaction wrote nothing.
        reason = str(error).splitlines()[0][:200]
        raise CorpusImportError(f"the database refused a value in this file ({reason}); nothing was imported") from None
    return ImportResult(count=count, corpora=sorted(corpora))


def _chunks(items, size):
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _IdAllocator:
    """Rejects ids the campaign already has and numbers rows without one after the largest numeric id.

    Rows stream past, so a number given to an earlier row may turn out to be the id a
    later row names: the named id wins and the earlier row moves to the next free number.
    """

    def __init__(self, campaign):
        self.campaign = campaign
        self.existing = set(campaign.pairs.values_list("external_id", flat=True))
        self.taken = set(self.existing)
        numbered = (
            pair_id for pair_id in self.existing if pair_id.isdecimal() and len(pair_id) <= NUMBERED_ID_MAX_DIGITS
        )
        self.next_id = max((int(pair_id) for pair_id in numbered), default=0) + 1
        self.pending = {}  # numbers given to rows of the chunk not yet inserted -> their Pair
        self.stored = set()  # numbers given to rows already inserted
        self.metadata_keys = MetadataKeyCap(campaign)

    def pair_of(self, row: PairRow) -> Pair:
        self.metadata_keys.add(row.metadata, row.location)
        external_id = row.external_id
        if external_id is None:
            external_id = self._next_free()
        elif external_id in self.existing:
            raise CorpusConflictError(
                f"{row.location}: id {external_id!r} already exists in campaign {self.campaign.slug!r}"
            )
        else:
            self._move_numbered_row(external_id)
            self.taken.add(external_id)
        pair = Pair.build(
            self.campaign,
            external_id=external_id,
            corpus=row.corpus,
            source=row.source,
            hypothesis=row.hypothesis,
            gold_label=row.gold_label,
            metadata=row.metadata,
            gold_tags=row.gold_tags,
        )
        if row.external_id is None:
            self.pending[external_id] = pair
        return pair

    def chunk_stored(self):
        self.stored.update(self.pending)
        self.pending = {}

    def _move_numbered_row(self, number):
        if number in self.pending:
            pair = self.pending.pop(number)
            pair.external_id = self._next_free()
            self.pending[pair.external_id] = pair
        elif number in self.stored:
            self.stored.discard(number)
            new_id = self._next_free()
            Pair.objects.filter(campaign=self.campaign, external_id=number).update(external_id=new_id)
            self.stored.add(new_id)

    def _next_free(self):
        while str(self.next_id) in self.taken:
            self.next_id += 1
        external_id = str(self.next_id)
        self.taken.add(external_id)
        self.next_id += 1
        return external_id


class MetadataKeyCap:
    """Refuses the row that would give the campaign more distinct metadata keys than PARASOL_METADATA_MAX_KEYS.

    Each key is a column of every export, so keys spread over rows (a few per row, different
    in each) widen them as much as one wide row: the cap counts the campaign, not the row.
    Used by every path that stores pairs: imports (`_save_rows`) and uploaded control items.
    """

    def __init__(self, campaign):
        self.campaign = campaign
        self.keys = campaign.metadata_keys_stored()

    def add(self, metadata, location):
        new = set(metadata or {}) - self.keys
        limit = settings.PARASOL_METADATA_MAX_KEYS
        if new and len(self.keys) + len(new) > limit:
            raise CorpusConflictError(
                f"{location}: its metadata keys would give campaign {self.campaign.slug!r} "
                f"{len(self.keys) + len(new):,} distinct metadata keys (extra columns), more than the limit of "
                f"{limit:,} (PARASOL_METADATA_MAX_KEYS); nothing was imported"
            )
        self.keys |= new
