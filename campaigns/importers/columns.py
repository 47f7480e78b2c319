"""Which column (or JSON key) holds each field: shared by the readers' header checks and the row checks."""

from django.conf import settings

from .errors import CorpusImportError

# Column names accepted for each field; `pair_id` and `gold_label` let an exported
# pairs CSV be imported again as it is.
COLUMN_ALIASES = {
    "id": ("id", "pair_id", "external_id"),
    "source": ("source",),
    "hypothesis": ("hypothesis",),
    "label": ("label", "gold_label"),
    "corpus": ("corpus",),
}


def check_column_count(count, location, what):
    limit = settings.PARASOL_IMPORT_MAX_COLUMNS
    if count > limit:
        raise CorpusImportError(
            f"{location}: {count:,} {what}, more than the limit of {limit:,} (PARASOL_IMPORT_MAX_COLUMNS)"
        )


def check_header(header, number):
    check_column_count(len(header), f"line {number}", "columns in the header")
    seen = set()
    for column in header:
        if not column:
            raise CorpusImportError(f"line {number}: the header has an unnamed column")
        if column in seen:
            raise CorpusImportError(f"line {number}: the header names the column {column!r} twice")
        seen.add(column)
    columns = {name: find_column(header, name, f"line {number}") for name in COLUMN_ALIASES}
    for name in ("source", "hypothesis"):
        if columns[name] is None:
            raise CorpusImportError(f"line {number}: missing column {name!r}")


def find_column(keys, name, location):
    """The key that holds field `name` (matched case-insensitively, aliases allowed), or None."""
    matches = [key for key in keys if isinstance(key, str) and key.strip().lower() in COLUMN_ALIASES[name]]
    if len(matches) > 1:
        raise CorpusImportError(f"{location}: columns {' and '.join(map(repr, matches))} both give the {name}")
    return matches[0] if matches else None
