"""Read corpora of sentence pairs (CSV, TSV, JSONL, MRPC, PAWS) and import them into a campaign.

Parsing is pure and lazy (`iter_corpus` reads a file line by line; `parse_corpus` lists the
rows); importing (`import_pairs`, `import_rows`) validates each row as it streams past and
inserts chunks of rows inside one transaction, so a large file is never held in memory
and a bad file, even one bad on its last line, imports nothing.
"""

import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DataError, IntegrityError, transaction

from campaigns.models import Pair
from campaigns.signals import pairs_created
from parasol.db import forget_logged_queries
from scoring.metrics.filters import bleu_range_problem, paratag_reason
from scoring.metrics.words import word_tokens

FORMATS = ("auto", "csv", "tsv", "jsonl", "mrpc", "paws")

MRPC_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
PAWS_HEADER = ["id", "sentence1", "sentence2", "label"]
DEFAULT_CORPUS_OF_FORMAT = {"mrpc": "MRPC", "paws": "PAWS"}
EXTENSION_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv"}

# Column names accepted for each field; `pair_id` and `gold_label` let an exported
# pairs CSV be imported again as it is.
COLUMN_ALIASES = {
    "id": ("id", "pair_id", "external_id"),
    "source": ("source",),
    "hypothesis": ("hypothesis",),
    "label": ("label", "gold_label"),
    "corpus": ("corpus",),
}
# A pre-tagged pair's fields (as `export_pairs --spans` writes them); not metadata.
TAGGING_KEYS = ("source_tags", "hypothesis_tags", "source_tokens", "hypothesis_tokens")
GOLD_LABEL_OF_TEXT = {
    "1": 1,
    "yes": 1,
    "true": 1,
    "paraphrase": 1,
    "0": 0,
    "no": 0,
    "false": 0,
    "non-paraphrase": 0,
}
ID_MAX_LENGTH = Pair._meta.get_field("external_id").max_length
CORPUS_MAX_LENGTH = Pair._meta.get_field("corpus").max_length
UTF8_BOM = b"\xef\xbb\xbf"
# PostgreSQL stores no NUL in text or jsonb; a NUL usually means a UTF-16 file.
NUL_MESSAGE = "the {name} contains a NUL character (0x00); if the file is UTF-16, save it as UTF-8"
# A lone UTF-16 surrogate (JSON "\\ud800") cannot be encoded in UTF-8, so no database stores it.
SURROGATE_MESSAGE = "the {name} contains a lone UTF-16 surrogate ({code}), which is not a character"
# Numbers given to id-less rows continue after the largest numeric id; longer
# "numbers" are ids like any other (they would overflow the id column).
NUMBERED_ID_MAX_DIGITS = 18


class CorpusImportError(Exception):
    """A file or row that cannot be imported; the message names the line and the problem."""


@dataclass
class PairRow:
    external_id: str | None  # None: an id is generated at import
    corpus: str
    source: str
    hypothesis: str
    gold_label: int | None
    metadata: dict = field(default_factory=dict)
    # A reference tagging, 0/1 per word: {"source": [...], "hypothesis": [...]}, or {}.
    gold_tags: dict = field(default_factory=dict)
    location: str = field(default="", compare=False)  # "line 3" or "row 3", for messages


@dataclass
class ImportResult:
    count: int
    corpora: list[str]
    # Rows left out by a filter (ParaTag's BLEU range): (location, reason).
    rejected: list[tuple[str, str]] = field(default_factory=list)


# Rows per INSERT while streaming an import; also how often the progress callback runs.
IMPORT_CHUNK_ROWS = 2000

# A file to import: its bytes, or a binary file object (seekable: it is read twice, the
# first line to detect the format, then the whole file).
Source = bytes | io.IOBase


def parse_corpus(data: Source, *, format="auto", filename="", default_corpus="") -> list[PairRow]:
    """Parse a whole file into pair rows, or raise CorpusImportError naming the first problem."""
    return list(iter_corpus(data, format=format, filename=filename, default_corpus=default_corpus))


def iter_corpus(data: Source, *, format="auto", filename="", default_corpus="", progress=None) -> Iterator[PairRow]:
    """Validated pair rows, read lazily line by line; CorpusImportError names the first bad line.

    `progress(bytes_read)` is called every IMPORT_CHUNK_ROWS lines and at the end.
    """
    if format not in FORMATS:
        raise CorpusImportError(f"unknown format {format!r}; use one of {', '.join(FORMATS)}")
    stream = io.BytesIO(data) if isinstance(data, bytes | bytearray) else data
    _check_size(stream)
    header = next((line for line in _decoded_lines(stream) if line.strip()), None)
    if header is None:
        raise CorpusImportError("the file is empty")
    if format == "auto":
        format = detect_format(header, filename)
    stream.seek(0)
    records = RECORD_READERS[format](_decoded_lines(stream, progress))
    default_corpus = default_corpus or DEFAULT_CORPUS_OF_FORMAT.get(format, "")
    return _rows_of_records(records, default_corpus=default_corpus, empty_message="the file holds no pairs")


def detect_format(text: str, filename="") -> str:
    """Guess the format from the header line, then the file extension."""
    header = next((line for line in text.split("\n") if line.strip()), "")
    header_fields = [name.strip() for name in header.rstrip("\r").split("\t")]
    if header_fields == MRPC_HEADER:
        return "mrpc"
    if header_fields == PAWS_HEADER:
        return "paws"
    extension = filename[filename.rfind(".") :].lower() if "." in filename else ""
    if extension in EXTENSION_FORMATS:
        return EXTENSION_FORMATS[extension]
    if header.lstrip().startswith("{"):
        return "jsonl"
    return "tsv" if "\t" in header else "csv"


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
    records = []
    for number, row in enumerate(rows, start=1):
        if number > settings.PARASOL_IMPORT_MAX_ROWS:
            raise CorpusImportError(_too_many_rows_message(f"row {number}"))
        records.append((f"row {number}", row))
    parsed = _rows_of_records(records, default_corpus=corpus, empty_message="no pairs were given")
    return _save_rows(campaign, parsed)


def _save_rows(campaign, rows: Iterable[PairRow]) -> ImportResult:
    """Insert rows chunk by chunk in one transaction: any error, even on the last row, rolls all back."""
    count, corpora, pair_pks = 0, set(), []
    try:
        with transaction.atomic():
            ids = _IdAllocator(campaign)
            for chunk in _chunks(rows, IMPORT_CHUNK_ROWS):
                created = Pair.objects.bulk_create([ids.pair_of(row) for row in chunk], batch_size=IMPORT_CHUNK_ROWS)
                ids.chunk_stored()
                forget_logged_queries()
                pair_pks += [pair.pk for pair in created]
                count += len(chunk)
                corpora.update(row.corpus for row in chunk)
            pairs_created.send(sender=Pair, campaign=campaign, pair_pks=pair_pks)
    except IntegrityError:
        # Only a concurrent import into the same campaign can get here: ids were checked above.
        raise CorpusImportError(
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
            raise CorpusImportError(
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
            raise CorpusImportError(
                f"{location}: its metadata keys would give campaign {self.campaign.slug!r} "
                f"{len(self.keys) + len(new):,} distinct metadata keys (extra columns), more than the limit of "
                f"{limit:,} (PARASOL_METADATA_MAX_KEYS); nothing was imported"
            )
        self.keys |= new


def _check_size(stream):
    """Refuse a file over PARASOL_IMPORT_MAX_BYTES before reading any of it."""
    size = stream.seek(0, io.SEEK_END)
    stream.seek(0)
    if size > settings.PARASOL_IMPORT_MAX_BYTES:
        raise CorpusImportError(
            f"the file is larger than the limit of {settings.PARASOL_IMPORT_MAX_BYTES:,} bytes "
            "(PARASOL_IMPORT_MAX_BYTES)"
        )


def _decoded_lines(stream, progress: Callable[[int], None] | None = None) -> Iterator[str]:
    """The file's lines as text, each with its "\n", split on "\n" only (a lone "\r" is data).

    A byte that is not UTF-8 stops the reading with its line and offset.
    """
    offset = 0
    for number, raw in enumerate(stream, start=1):
        start = len(UTF8_BOM) if number == 1 and raw.startswith(UTF8_BOM) else 0
        try:
            line = raw[start:].decode("utf-8")
        except UnicodeDecodeError as error:
            bad = offset + start + error.start
            raise CorpusImportError(
                f"line {number}: the file is not UTF-8 (byte 0x{raw[start + error.start]:02x} at offset {bad}); "
                "save it as UTF-8"
            ) from None
        offset += len(raw)
        if progress is not None and number % IMPORT_CHUNK_ROWS == 0:
            progress(offset)
        yield line
    if progress is not None:
        progress(offset)


def _too_many_rows_message(location):
    return f"{location}: more than {settings.PARASOL_IMPORT_MAX_ROWS:,} pairs, the limit (PARASOL_IMPORT_MAX_ROWS)"


# Record readers turn text into (location, dict) pairs with the generic field names.


def _numbered_lines(lines):
    """Non-blank lines with their 1-based numbers; a line of only tabs still counts as a row."""
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\n").rstrip("\r")
        if line.strip() or "\t" in line:
            yield number, line


def _limit_rows(records):
    for count, (location, record) in enumerate(records, start=1):
        if count > settings.PARASOL_IMPORT_MAX_ROWS:
            raise CorpusImportError(_too_many_rows_message(location))
        yield location, record


def _read_tab_separated(lines, *, expected_header=None, name="TSV"):
    # Quotes are literal characters in these files (MRPC and PAWS sentences contain
    # unbalanced quotes), so fields are split on tabs alone, as csv.QUOTE_NONE would.
    lines = _numbered_lines(lines)
    header_number, header_line = next(lines)
    header = [column.strip() for column in header_line.split("\t")]
    if expected_header is None:
        _check_header(header, header_number)
    elif header != expected_header:
        raise CorpusImportError(
            f"line {header_number}: not a {name} header; expected the columns {', '.join(expected_header)}"
        )
    for number, line in lines:
        values = line.split("\t")
        if len(values) != len(header):
            raise CorpusImportError(f"line {number}: expected {len(header)} tab-separated fields, found {len(values)}")
        yield f"line {number}", dict(zip(header, values, strict=True))


def _read_tsv(lines):
    return _limit_rows(_read_tab_separated(lines))


def _read_mrpc(lines):
    for location, record in _limit_rows(_read_tab_separated(lines, expected_header=MRPC_HEADER, name="MRPC")):
        yield (
            location,
            {
                "id": f"{record['#1 ID'].strip()}-{record['#2 ID'].strip()}",
                "source": record["#1 String"],
                "hypothesis": record["#2 String"],
                "label": record["Quality"],
            },
        )


def _read_paws(lines):
    for location, record in _limit_rows(_read_tab_separated(lines, expected_header=PAWS_HEADER, name="PAWS")):
        yield (
            location,
            {
                "id": record["id"],
                "source": record["sentence1"],
                "hypothesis": record["sentence2"],
                "label": record["label"],
            },
        )


def _read_csv(lines):
    return _limit_rows(_read_csv_records(lines))


def _read_csv_records(lines):
    reader = csv.reader(lines, strict=True)
    header = None
    while True:
        start = reader.line_num + 1
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise CorpusImportError(f"line {reader.line_num}: malformed CSV ({error})") from None
        if not values:
            continue
        if header is None:
            header = [column.strip() for column in values]
            _check_header(header, start)
            continue
        if len(values) != len(header):
            raise CorpusImportError(f"line {start}: expected {len(header)} comma-separated fields, found {len(values)}")
        yield f"line {start}", dict(zip(header, values, strict=True))


def _read_jsonl(lines):
    return _limit_rows(_read_jsonl_records(lines))


def _read_jsonl_records(lines):
    for number, line in _numbered_lines(lines):
        try:
            record = json.loads(line, parse_constant=_refuse_constant)
        except json.JSONDecodeError as error:
            raise CorpusImportError(f"line {number}: malformed JSON ({error.msg} at column {error.colno})") from None
        except ValueError as error:  # NaN, Infinity, or an integer too long to convert
            raise CorpusImportError(f"line {number}: malformed JSON ({error})") from None
        except RecursionError:
            raise CorpusImportError(f"line {number}: malformed JSON (nested too deeply)") from None
        yield f"line {number}", record


def _metadata_problem(value):
    """What makes a metadata value unstorable (NUL, lone surrogate, infinite number), or None.

    Iterative: nesting may be deep.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            problem = _string_problem(item, "metadata")
            if problem:
                return problem
        elif isinstance(item, float) and not math.isfinite(item):
            return f"the metadata holds the number {item}, too large for JSON storage"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif not isinstance(item, (int, float, bool)) and item is not None:
            return f"the metadata holds {_shown(item)}, which is not a JSON value"
    return None


def _refuse_constant(name):
    # Python reads NaN and Infinity, but they are not JSON and PostgreSQL's jsonb refuses them.
    raise ValueError(f"{name} is not a JSON value")


RECORD_READERS = {"csv": _read_csv, "tsv": _read_tsv, "jsonl": _read_jsonl, "mrpc": _read_mrpc, "paws": _read_paws}


def _check_column_count(count, location, what):
    limit = settings.PARASOL_IMPORT_MAX_COLUMNS
    if count > limit:
        raise CorpusImportError(
            f"{location}: {count:,} {what}, more than the limit of {limit:,} (PARASOL_IMPORT_MAX_COLUMNS)"
        )


def _check_metadata_size(metadata, location):
    limit = settings.PARASOL_MAX_METADATA_CHARS
    size = len(json.dumps(metadata, ensure_ascii=False))
    if size > limit:
        raise CorpusImportError(
            f"{location}: the extra columns (metadata) take {size:,} characters as JSON, more than the limit "
            f"of {limit:,} (PARASOL_MAX_METADATA_CHARS)"
        )


def _check_header(header, number):
    _check_column_count(len(header), f"line {number}", "columns in the header")
    seen = set()
    for column in header:
        if not column:
            raise CorpusImportError(f"line {number}: the header has an unnamed column")
        if column in seen:
            raise CorpusImportError(f"line {number}: the header names the column {column!r} twice")
        seen.add(column)
    columns = {name: _find_column(header, name, f"line {number}") for name in COLUMN_ALIASES}
    for name in ("source", "hypothesis"):
        if columns[name] is None:
            raise CorpusImportError(f"line {number}: missing column {name!r}")


def _find_column(keys, name, location):
    """The key that holds field `name` (matched case-insensitively, aliases allowed), or None."""
    matches = [key for key in keys if isinstance(key, str) and key.strip().lower() in COLUMN_ALIASES[name]]
    if len(matches) > 1:
        raise CorpusImportError(f"{location}: columns {' and '.join(map(repr, matches))} both give the {name}")
    return matches[0] if matches else None


# Validation shared by every format and by import_rows.


def _rows_of_records(records, *, default_corpus, empty_message):
    """Validated rows, one at a time; the ids seen are remembered to refuse one used twice."""
    line_of_id = {}
    count = 0
    for location, record in records:
        row = _row_of_record(location, record, default_corpus)
        if row.external_id is not None:
            first = line_of_id.get(row.external_id)
            if first is not None:
                raise CorpusImportError(f"{location}: id {row.external_id!r} is used twice (first on {first})")
            line_of_id[row.external_id] = location
        count += 1
        yield row
    if count == 0:
        raise CorpusImportError(empty_message)


def validated_row(record: dict, *, location="the pair", default_corpus="") -> PairRow:
    """One pair given as a dict (as in JSONL), checked exactly as an import checks each row (the admin's pair form).

    Raises CorpusImportError naming `location` and the problem.
    """
    return _row_of_record(location, record, default_corpus)


def _row_of_record(location, record, default_corpus):
    if not isinstance(record, dict):
        raise CorpusImportError(f"{location}: expected an object with source and hypothesis")
    _check_column_count(len(record), location, "fields")
    keys = {name: _find_column(record, name, location) for name in COLUMN_ALIASES}
    for name in ("source", "hypothesis"):
        if keys[name] is None:
            raise CorpusImportError(f"{location}: missing field {name!r}")
    metadata = {key: value for key, value in record.items() if key not in keys.values() and key not in TAGGING_KEYS}
    if isinstance(metadata.get("metadata"), dict):
        metadata = {**metadata.pop("metadata"), **metadata}
    problem = _metadata_problem(metadata)
    if problem:
        raise CorpusImportError(f"{location}: {problem}")
    _check_metadata_size(metadata, location)
    corpus = _text(record, keys["corpus"], location, "corpus") or default_corpus
    if len(corpus) > CORPUS_MAX_LENGTH:
        raise CorpusImportError(f"{location}: corpus name longer than {CORPUS_MAX_LENGTH} characters")
    sentences = {side: _sentence(record, keys[side], location, side) for side in ("source", "hypothesis")}
    return PairRow(
        external_id=_external_id(record, keys["id"], location),
        corpus=corpus,
        source=sentences["source"],
        hypothesis=sentences["hypothesis"],
        gold_label=_gold_label(record, keys["label"], location),
        metadata=metadata,
        gold_tags=_gold_tags(record, sentences, location),
        location=location,
    )


def _gold_tags(record, sentences, location):
    """A pre-tagged pair's tagging (`<side>_tags`: 0/1 per word of `word_tokens`), checked word for word."""
    given = [side for side in sentences if record.get(f"{side}_tags") is not None]
    if not given:
        return {}
    if len(given) == 1:
        raise CorpusImportError(f"{location}: {given[0]}_tags is given without the other sentence's tags")
    tags = {}
    for side, sentence in sentences.items():
        words = word_tokens(sentence)
        value = record[f"{side}_tags"]
        if isinstance(value, str):
            # A CSV cell: the tags as a JSON list.
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = None
        if not isinstance(value, list) or any(tag not in (0, 1) or isinstance(tag, float) for tag in value):
            raise CorpusImportError(f"{location}: {side}_tags must be a list of 0 and 1, one per word")
        if len(value) != len(words):
            raise CorpusImportError(
                f"{location}: {side}_tags has {len(value)} tags but the {side} has {len(words)} words: "
                + " ".join(words)
            )
        stated = record.get(f"{side}_tokens")
        if stated is not None and list(stated) != words:
            raise CorpusImportError(f"{location}: {side}_tokens differ from Parasol's words: {' '.join(words)}")
        tags[side] = [int(tag) for tag in value]
    return tags


def _text(record, key, location, name):
    value = record.get(key) if key is not None else None
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CorpusImportError(f"{location}: the {name} must be text, got {_shown(value)}")
    problem = _string_problem(value, name)
    if problem:
        raise CorpusImportError(f"{location}: {problem}")
    return value.strip()


def _shown(value):
    """A short rendering of a value for a message (it may not even be JSON: a file part, say)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _string_problem(value, name):
    if "\x00" in value:
        return NUL_MESSAGE.format(name=name)
    surrogate = next((char for char in value if "\ud800" <= char <= "\udfff"), None)
    if surrogate is not None:
        return SURROGATE_MESSAGE.format(name=name, code=f"U+{ord(surrogate):04X}")
    return None


def _sentence(record, key, location, name):
    value = _text(record, key, location, name)
    if not value:
        raise CorpusImportError(f"{location}: empty {name}")
    limit = settings.PARASOL_MAX_SENTENCE_CHARS
    if len(value) > limit:
        raise CorpusImportError(
            f"{location}: the {name} has {len(value):,} characters, more than the limit of {limit:,} "
            "(PARASOL_MAX_SENTENCE_CHARS)"
        )
    return value


def _external_id(record, key, location):
    if key is not None and isinstance(record[key], int) and not isinstance(record[key], bool):
        value = str(record[key])
    else:
        value = _text(record, key, location, "id")
    if len(value) > ID_MAX_LENGTH:
        raise CorpusImportError(f"{location}: id longer than {ID_MAX_LENGTH} characters")
    return value or None


def _gold_label(record, key, location):
    value = record.get(key) if key is not None else None
    if value is None:
        return None
    if isinstance(value, bool) or value in (0, 1):
        return int(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in GOLD_LABEL_OF_TEXT:
            return GOLD_LABEL_OF_TEXT[text]
    raise CorpusImportError(
        f"{location}: bad label {json.dumps(value)}; use 0/1, yes/no, true/false, "
        "paraphrase/non-paraphrase, or leave it empty"
    )
