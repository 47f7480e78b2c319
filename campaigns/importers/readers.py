"""Readers: a file's bytes to (location, record) pairs under the generic field names, lazily, with no database.

`read_records` checks the file's size, detects its format and hands its decoded lines to
the format's reader; each reader yields ("line 3", {"source": ..., ...}) one line at a time.
"""

import csv
import io
import json
from collections.abc import Callable, Iterator

from django.conf import settings

from .columns import check_header
from .errors import CorpusImportError

FORMATS = ("auto", "csv", "tsv", "jsonl", "mrpc", "paws")

MRPC_HEADER = ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"]
PAWS_HEADER = ["id", "sentence1", "sentence2", "label"]
DEFAULT_CORPUS_OF_FORMAT = {"mrpc": "MRPC", "paws": "PAWS"}
EXTENSION_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "tsv"}
UTF8_BOM = b"\xef\xbb\xbf"

# Lines per progress call while reading; also rows per INSERT while saving (`saving`
# reads it from here, so that one number sets both).
IMPORT_CHUNK_ROWS = 2000

# A file to import: its bytes, or a binary file object (seekable: it is read twice, the
# first line to detect the format, then the whole file).
Source = bytes | io.IOBase


def read_records(data: Source, *, format="auto", filename="", progress=None) -> tuple[str, Iterator]:
    """The file's format and its (location, record) pairs, read lazily; the checks of the whole file come first.

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
    return format, RECORD_READERS[format](_decoded_lines(stream, progress))


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


def limit_rows(records):
    """The records, refusing the one past PARASOL_IMPORT_MAX_ROWS (rows are counted, not lines)."""
    for count, (location, record) in enumerate(records, start=1):
        if count > settings.PARASOL_IMPORT_MAX_ROWS:
            raise CorpusImportError(
                f"{location}: more than {settings.PARASOL_IMPORT_MAX_ROWS:,} pairs, the limit (PARASOL_IMPORT_MAX_ROWS)"
            )
        yield location, record


# Record readers turn text into (location, dict) pairs with the generic field names.


def _numbered_lines(lines):
    """Non-blank lines with their 1-based numbers; a line of only tabs still counts as a row."""
    for number, line in enumerate(lines, start=1):
        line = line.removesuffix("\n").rstrip("\r")
        if line.strip() or "\t" in line:
            yield number, line


def _read_tab_separated(lines, *, expected_header=None, name="TSV"):
    # Quotes are literal characters in these files (MRPC and PAWS sentences contain
    # unbalanced quotes), so fields are split on tabs alone, as csv.QUOTE_NONE would.
    lines = _numbered_lines(lines)
    header_number, header_line = next(lines)
    header = [column.strip() for column in header_line.split("\t")]
    if expected_header is None:
        check_header(header, header_number)
    elif header != expected_header:
        raise CorpusImportError(
            f"line {header_number}: not a {name} header; expected the columns {', '.join(expected_header)}"
        )
    for number, line in lines:
        yield _located_record(number, header, line.split("\t"), "tab-separated")


def _located_record(number, header, values, separated):
    """("line N", the values by column name), once the line is known to have a value per column."""
    if len(values) != len(header):
        raise CorpusImportError(f"line {number}: expected {len(header)} {separated} fields, found {len(values)}")
    return f"line {number}", dict(zip(header, values, strict=True))


def _read_tsv(lines):
    return limit_rows(_read_tab_separated(lines))


def _read_mrpc(lines):
    for location, record in limit_rows(_read_tab_separated(lines, expected_header=MRPC_HEADER, name="MRPC")):
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
    for location, record in limit_rows(_read_tab_separated(lines, expected_header=PAWS_HEADER, name="PAWS")):
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
    return limit_rows(_read_csv_records(lines))


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
            check_header(header, start)
            continue
        yield _located_record(start, header, values, "comma-separated")


def _read_jsonl(lines):
    return limit_rows(_read_jsonl_records(lines))


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


def _refuse_constant(name):
    # Python reads NaN and Infinity, but they are not JSON and PostgreSQL's jsonb refuses them.
    raise ValueError(f"{name} is not a JSON value")


RECORD_READERS = {"csv": _read_csv, "tsv": _read_tsv, "jsonl": _read_jsonl, "mrpc": _read_mrpc, "paws": _read_paws}
