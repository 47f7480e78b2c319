"""Read corpora of sentence pairs (CSV, TSV, JSONL, MRPC, PAWS) and import them into a campaign.

Three steps, one module each: `readers` turn a file's bytes into records, lazily and with no
database; `validation` checks each record into a PairRow; `saving` gives ids and inserts
chunks of rows inside one transaction, so a large file is never held in memory and a bad
file, even one bad on its last line, imports nothing. `parsing` chains the first two.
This module re-exports what the other apps use.
"""

from .errors import CorpusConflictError, CorpusImportError
from .parsing import iter_corpus, parse_corpus
from .readers import FORMATS, MRPC_HEADER, PAWS_HEADER, detect_format
from .saving import ImportResult, MetadataKeyCap, RejectedRow, import_pairs, import_rows
from .validation import PairRow, validated_row

__all__ = [
    "FORMATS",
    "MRPC_HEADER",
    "PAWS_HEADER",
    "CorpusConflictError",
    "CorpusImportError",
    "ImportResult",
    "MetadataKeyCap",
    "PairRow",
    "RejectedRow",
    "detect_format",
    "import_pairs",
    "import_rows",
    "iter_corpus",
    "parse_corpus",
    "validated_row",
]
