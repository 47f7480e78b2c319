"""A file to validated pair rows, lazily: a reader (`readers`), then the row checks (`validation`); no database."""

from collections.abc import Iterator

from .readers import DEFAULT_CORPUS_OF_FORMAT, Source, read_records
from .validation import PairRow, rows_of_records


def parse_corpus(data: Source, *, format="auto", filename="", default_corpus="") -> list[PairRow]:
    """Parse a whole file into pair rows, or raise CorpusImportError naming the first problem."""
    return list(iter_corpus(data, format=format, filename=filename, default_corpus=default_corpus))


def iter_corpus(data: Source, *, format="auto", filename="", default_corpus="", progress=None) -> Iterator[PairRow]:
    """Validated pair rows, read lazily line by line; CorpusImportError names the first bad line.

    `progress(bytes_read)` is called every IMPORT_CHUNK_ROWS lines and at the end.
    """
    format, records = read_records(data, format=format, filename=filename, progress=progress)
    default_corpus = default_corpus or DEFAULT_CORPUS_OF_FORMAT.get(format, "")
    return rows_of_records(records, default_corpus=default_corpus, empty_message="the file holds no pairs")
