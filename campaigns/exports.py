"""CSV files Parasol writes: UTF-8, RFC 4180 line ends, and no cell a spreadsheet would run as a formula.

The frames they hold are built elsewhere (`reports.exports` for pairs and judgments).
"""

import io
import json
import logging
import numbers
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

logger = logging.getLogger(__name__)

# The last line of a streamed export that failed midway: a comment line no CSV reader takes for a
# row (pandas' `comment='#'` drops it, a spreadsheet shows it), so a short file never looks complete.
# The error itself goes to the server's log only: its text may name internals.
FAILED_EXPORT_LINE = "# EXPORT FAILED: the server hit an error midway; the file is incomplete (see the server log).\r\n"

# A spreadsheet runs a cell starting with one of these as a formula (CSV injection).
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# A spreadsheet that splits on another separator (";" in many locales, tab, "|") starts a
# new cell there: a trigger right after one would start a formula too ("safe;=1+1"); so does
# a line break inside a quoted cell, to a reader that splits lines before quotes ("a\n=1+1").
# "-" counts only when glued to what follows, so a dash in prose ("yes; - no") stays as written.
FORMULA_AFTER_SEPARATOR = re.compile(r"([;,|\t\r\n]\s*)(?=[=+@]|-\S)")


def neutralise_formula(text):
    """Prefix every would-be formula, at the start or after a separator, with an apostrophe (OWASP's advice)."""
    if not isinstance(text, str):
        return text
    text = FORMULA_AFTER_SEPARATOR.sub(r"\1'", text)
    return "'" + text if text.startswith(FORMULA_TRIGGERS) else text


def csv_cell(value):
    """The one guard of every CSV cell Parasol writes, whatever the value's type.

    Missing values stay missing and numbers stay numbers (a spreadsheet reads -0.5 as a number,
    never as a formula); text is neutralised; anything else (a list, a dict, nested values, any
    other object) is first written as the text the file will hold (JSON, keys sorted), then
    neutralised: pandas would otherwise write its repr, unguarded.
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, numbers.Real):  # int, float, bool and numpy's numbers
        return value
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        value = _as_text(value)
    return neutralise_formula(value)


def _as_text(value) -> str:
    """JSON for what JSON can hold (keys sorted, as the metadata columns always were), str() for the rest."""
    if isinstance(value, tuple | set | frozenset):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):  # keys of mixed types cannot be sorted; a circular structure
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            return str(value)


def write_csv(frame: pd.DataFrame, path_or_buffer, header=True, comments=()) -> None:
    """Write a frame as UTF-8 CSV without the index; missing values are empty cells.

    Every cell goes through `csv_cell`: header cells (column names: metadata keys come from
    imported files) as data cells, every column whose dtype is not numeric whatever its
    values' types; numeric columns, negative scores included, are left as numbers.
    `comments`, when given, open the file as "# ..." lines (read back with pandas'
    `comment='#'`), guarded too: a spreadsheet splitting on ";" would start a cell in them.
    """
    if comments:
        text = "".join(csv_cell("# " + " ".join(str(line).split())) + "\r\n" for line in comments)
        if isinstance(path_or_buffer, (str, Path)):
            with open(path_or_buffer, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                write_csv(frame, handle, header=header)
            return
        path_or_buffer.write(text)
    safe = frame.copy()
    safe.columns = [csv_cell(column) for column in safe.columns]
    for position in range(safe.shape[1]):  # by position: two columns may share a name
        column = safe.iloc[:, position]
        if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)):
            safe.isetitem(position, column.astype(object).map(csv_cell))
    # CRLF, as RFC 4180 has it: Python's csv then quotes any field holding a bare
    # \r or \n, which a \n terminator would leave unquoted (and split the row).
    safe.to_csv(path_or_buffer, index=False, header=header, encoding="utf-8", lineterminator="\r\n")


def csv_chunks(frames: Iterable[pd.DataFrame], columns: list[str]) -> Iterator[str]:
    """CSV text of consecutive frames as one file: the header once, then each frame's rows."""
    header = io.StringIO()
    write_csv(pd.DataFrame(columns=columns), header)
    yield header.getvalue()
    for frame in frames:
        buffer = io.StringIO()
        write_csv(frame, buffer, header=False)
        yield buffer.getvalue()


def guarded_chunks(chunks: Iterable[str], name: str) -> Iterator[bytes]:
    """`chunks` as sent over HTTP, encoded here; if one fails after the response has started, log it and end
    with FAILED_EXPORT_LINE.

    The status line (200) is already sent by then: this line is the only way left to say the file is short.
    Each chunk is encoded inside the guard: left to the response, a text UTF-8 cannot hold (a lone
    surrogate) would cut the file after the guard, without its failure line.
    """
    try:
        for chunk in chunks:
            yield chunk.encode("utf-8")
    except Exception:
        logger.exception("The export %s failed midway; the client got a truncated file marked as such.", name)
        yield FAILED_EXPORT_LINE.encode("utf-8")


def _mode_for_new_files():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path, chunks: Iterable[str]) -> None:
    """Write `chunks` to a temporary file beside `path`, renamed to `path` only once complete.

    If any chunk fails, the temporary file is removed and the error raised: `path` is either the
    whole new file or left as it was, never a short file that looks complete.
    """
    path = Path(path)
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed below, on success and on failure)
        "w", encoding="utf-8", newline="", dir=path.parent, prefix=f".{path.name}.", suffix=".partial", delete=False
    )
    try:
        with handle:
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, _mode_for_new_files())  # as open() would have made it, not tempfile's 0600
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
