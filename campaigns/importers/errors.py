"""The error every step of an import raises; it reaches the researcher as a message, never a traceback."""


class CorpusImportError(Exception):
    """A file or row that cannot be imported; the message names the line and the problem."""
