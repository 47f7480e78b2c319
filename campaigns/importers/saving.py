"""Saving: id allocation and an all-or-nothing write of validated rows into a campaign.

`import_pairs` streams a file through `parsing.iter_corpus` and inserts chunks of rows
inside one transaction, so a large file is never held in memory and a bad file, even one
bad on its last line, imports nothing; `import_rows` does the same for rows given as dicts.
The write owns its result: the rows it inserted and those a filter left out, each with its
line, built as it goes and returned whole.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db import DataError, IntegrityError, transaction

from campaigns.models import Pair
from campaigns.signals import pairs_created
from metrics.filters import bleu_range_problem, paratag_reason
from parasol.db import forget_logged_queries

from . import readers
from .errors import CorpusConflictError, CorpusImportError
from .parsing import iter_corpus
from .readers import Source, limit_rows
from .validation import PairRow, rows_of_records

# Numbers given to id-less rows continue after the largest numeric id; longer
# "numbers" are ids like any other (they would overflow the id column).
NUMBERED_ID_MAX_DIGITS = 18


@dataclass(frozen=True)
class RejectedRow:
    """A row a filter left out (ParaTag's BLEU range and lengths), at its line in the file as given."""

    location: str  # "line 7" (a file) or "row 7" (rows given as dicts)
    reason: str

    def __str__(self):
        return f"{self.location}: {self.reason}"


@dataclass(frozen=True)
class ImportResult:
    count: int  # pairs inserted
    corpora: list[str]
    rejected: tuple[RejectedRow, ...] = ()


# What the write reads: each row with the reason a filter leaves it out, or None to insert it.
Verdicts = Iterable[tuple[PairRow, str | None]]


def import_pairs(
    campaign, data: Source, *, format="auto", filename="", corpus="", progress=None, bleu_range=None
) -> ImportResult:
    """Parse a file and import all its pairs into the campaign, or none of them.

    `data` is the file's bytes or a seekable binary file, streamed either way;
    `progress(bytes_read)` reports how far the reading got. With `bleu_range` (low, high),
    ParaTag's filters (section 4.1) apply: only pairs whose BLEU lies strictly inside and whose
    lengths pass are imported; the others are in the result's `rejected`, with their lines.
    """
    if bleu_range is not None and (problem := bleu_range_problem(*bleu_range)):
        raise CorpusImportError(problem)

    def verdicts():
        rows = iter_corpus(data, format=format, filename=filename, default_corpus=corpus, progress=progress)
        return _paratag_verdicts(rows, *bleu_range) if bleu_range is not None else _all_kept(rows)

    result = _save_rows(campaign, verdicts)
    if result.count == 0 and result.rejected:
        raise CorpusImportError(
            f"no pair passes ParaTag's filters (BLEU inside ({bleu_range[0]:g}, {bleu_range[1]:g}), lengths); "
            f"first: {result.rejected[0]}"
        )
    return result


def _all_kept(rows) -> Iterator[tuple[PairRow, None]]:
    return ((row, None) for row in rows)


def _paratag_verdicts(rows, low, high) -> Iterator[tuple[PairRow, str | None]]:
    """Each row with why ParaTag's filters leave it out (BLEU not strictly inside (low, high), lengths), or None."""
    for row in rows:
        try:
            yield row, paratag_reason(row.source, row.hypothesis, low, high)
        except ValueError as error:
            raise CorpusImportError(str(error)) from None


def import_rows(campaign, rows, *, corpus="") -> ImportResult:
    """Import pairs given as dicts (as in JSONL: source, hypothesis, id, label, corpus, metadata)."""
    # Counted whole first: a row past the limit is refused before any row is checked.
    records = list(limit_rows((f"row {number}", row) for number, row in enumerate(rows, start=1)))
    return _save_rows(
        campaign,
        lambda: _all_kept(rows_of_records(records, default_corpus=corpus, empty_message="no pairs were given")),
    )


class _NumberNamedLater(Exception):
    """A row names an id this import already gave to an earlier id-less row."""

    def __init__(self, named_ids):
        self.named_ids = named_ids


def _save_rows(campaign, verdicts: Callable[[], Verdicts]) -> ImportResult:
    """Insert the kept rows in one transaction: any error, even on the last row, rolls all back.

    Id-less rows take, in file order, the next numbers that neither the campaign nor any row
    of the file names, and no stored row is ever renumbered. Rows stream past, so the ids named
    later are known only at the end: in the rare file whose later row names a number already
    given, that first write is rolled back and the rows (`verdicts()` reads them again) are
    written once more, numbered around every id the file names.
    """
    try:
        return _write(campaign, verdicts(), named_ids=frozenset())
    except _NumberNamedLater as clash:
        return _write(campaign, verdicts(), named_ids=clash.named_ids)


def _write(campaign, verdicts: Verdicts, named_ids) -> ImportResult:
    """One attempt: the rows chunk by chunk, the kept ones inserted, the others noted with their lines."""
    corpora, pair_pks, rejected = set(), [], []
    verdicts = iter(verdicts)
    try:
        with transaction.atomic():
            ids = _IdAllocator(campaign, named_ids)
            chunk_rows = readers.IMPORT_CHUNK_ROWS
            for chunk in _chunks(verdicts, chunk_rows):
                rejected += [RejectedRow(row.location, reason) for row, reason in chunk if reason is not None]
                kept = [row for row, reason in chunk if reason is None]
                pairs = [ids.pair_of(row) for row in kept]
                if ids.clash is not None:
                    raise _NumberNamedLater(ids.named_ids_to_the_end(row for row, reason in verdicts if reason is None))
                pair_pks += [pair.pk for pair in Pair.objects.bulk_create(pairs, batch_size=chunk_rows)]
                forget_logged_queries()
                corpora.update(row.corpus for row in kept)
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
    return ImportResult(count=len(pair_pks), corpora=sorted(corpora), rejected=tuple(rejected))


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
    """Rejects ids the campaign already has and numbers rows without one after the largest numeric id,
    skipping the ids the campaign has, the rows so far name, and `named_ids` (every id the file names,
    once known). A row naming a number already given sets `clash`: the caller writes again."""

    def __init__(self, campaign, named_ids):
        self.campaign = campaign
        self.existing = set(campaign.pairs.values_list("external_id", flat=True))
        self.taken = self.existing | named_ids
        numbered = (
            pair_id for pair_id in self.existing if pair_id.isdecimal() and len(pair_id) <= NUMBERED_ID_MAX_DIGITS
        )
        self.next_id = max((int(pair_id) for pair_id in numbered), default=0) + 1
        self.given = set()  # numbers given to id-less rows
        self.named = set()  # ids the rows so far name
        self.clash = None
        self.metadata_keys = MetadataKeyCap(campaign)

    def pair_of(self, row: PairRow) -> Pair:
        self.metadata_keys.add(row.metadata, row.location)
        external_id = row.external_id
        if external_id is None:
            external_id = self._next_free()
            self.given.add(external_id)
        elif external_id in self.existing:
            raise CorpusConflictError(
                f"{row.location}: id {external_id!r} already exists in campaign {self.campaign.slug!r}"
            )
        else:
            self.named.add(external_id)
            self.taken.add(external_id)
            if external_id in self.given:
                self.clash = external_id
        return Pair.build(
            self.campaign,
            external_id=external_id,
            corpus=row.corpus,
            source=row.source,
            hypothesis=row.hypothesis,
            gold_label=row.gold_label,
            metadata=row.metadata,
            gold_tags=row.gold_tags,
            tokenisation=row.tokenisation,
        )

    def named_ids_to_the_end(self, rows) -> frozenset:
        """Every id the file names: those seen so far and those of the rows not read yet (still checked)."""
        return frozenset(self.named | {row.external_id for row in rows if row.external_id is not None})

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
