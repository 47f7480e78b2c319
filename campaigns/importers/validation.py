"""Row checks: a record (a dict, from any reader or given directly) to a PairRow, or an error naming its location.

The same checks serve every format, `import_rows` and the admin's pair form (`validated_row`).
"""

import json
import math
from dataclasses import dataclass, field

from django.conf import settings

from campaigns.models import Pair
from metrics.words import TOKENISATION, TOKENISERS, word_tokens

from .columns import COLUMN_ALIASES, check_column_count, find_column
from .errors import CorpusConflictError, CorpusImportError

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
# PostgreSQL stores no NUL in text or jsonb; a NUL usually means a UTF-16 file.
NUL_MESSAGE = "the {name} contains a NUL character (0x00); if the file is UTF-16, save it as UTF-8"
# A lone UTF-16 surrogate (JSON "\\ud800") cannot be encoded in UTF-8, so no database stores it.
SURROGATE_MESSAGE = "the {name} contains a lone UTF-16 surrogate ({code}), which is not a character"


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
    # The tokenisation the tagging is over (`metrics.words`): the current one unless the
    # file states tokens of an older one (an export of an older campaign, read back).
    tokenisation: int = TOKENISATION
    location: str = field(default="", compare=False)  # "line 3" or "row 3", for messages


def rows_of_records(records, *, default_corpus, empty_message):
    """Validated rows, one at a time; the ids seen are remembered to refuse one used twice."""
    line_of_id = {}
    count = 0
    for location, record in records:
        row = _row_of_record(location, record, default_corpus)
        if row.external_id is not None:
            first = line_of_id.get(row.external_id)
            if first is not None:
                raise CorpusConflictError(f"{location}: id {row.external_id!r} is used twice (first on {first})")
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
    check_column_count(len(record), location, "fields")
    keys = {name: find_column(record, name, location) for name in COLUMN_ALIASES}
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
    gold_tags, tokenisation = _gold_tags(record, sentences, location)
    return PairRow(
        external_id=_external_id(record, keys["id"], location),
        corpus=corpus,
        source=sentences["source"],
        hypothesis=sentences["hypothesis"],
        gold_label=_gold_label(record, keys["label"], location),
        metadata=metadata,
        gold_tags=gold_tags,
        tokenisation=tokenisation,
        location=location,
    )


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


def _check_metadata_size(metadata, location):
    limit = settings.PARASOL_MAX_METADATA_CHARS
    size = len(json.dumps(metadata, ensure_ascii=False))
    if size > limit:
        raise CorpusImportError(
            f"{location}: the extra columns (metadata) take {size:,} characters as JSON, more than the limit "
            f"of {limit:,} (PARASOL_MAX_METADATA_CHARS)"
        )


def _gold_tags(record, sentences, location):
    """A pre-tagged pair's tagging (`<side>_tags`: 0/1 per word) and the tokenisation it is over, checked word
    for word: the current one, or the one whose words the file states (`<side>_tokens`, as the taggings export
    writes them)."""
    given = [side for side in sentences if record.get(f"{side}_tags") is not None]
    if not given:
        return {}, TOKENISATION
    if len(given) == 1:
        raise CorpusImportError(f"{location}: {given[0]}_tags is given without the other sentence's tags")
    version = _stated_tokenisation(record, sentences, location)
    tags = {}
    for side, sentence in sentences.items():
        words = word_tokens(sentence, version)
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
        tags[side] = [int(tag) for tag in value]
    return tags, version


def _stated_tokenisation(record, sentences, location):
    """The newest tokenisation giving the words the file states, the current one when it states none."""
    stated = {side: record.get(f"{side}_tokens") for side in sentences}
    stated = {side: value for side, value in stated.items() if value is not None}
    if not stated:
        return TOKENISATION
    for version in sorted(TOKENISERS, reverse=True):
        if all(list(value) == word_tokens(sentences[side], version) for side, value in stated.items()):
            return version
    side = next(iter(stated))
    words = word_tokens(sentences[side], TOKENISATION)
    raise CorpusImportError(f"{location}: {side}_tokens differ from Parasol's words: {' '.join(words)}")


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
