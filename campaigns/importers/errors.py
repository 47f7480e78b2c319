"""The error every step of an import raises; it reaches the researcher as a message, never a traceback."""


class CorpusImportError(Exception):
    """A file or row that cannot be imported; the message names the line and the problem."""


class CorpusConflictError(CorpusImportError):
    """Rows that are fine each on their own but clash: an id used twice or already taken, too many metadata keys.

    The API answers it with 409 (a conflict with stored data or within the request), not 400.
    """
