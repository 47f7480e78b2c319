"""Word-level differences between two sentences, for the yellow highlight.

Words are compared case-insensitively and without their surrounding
punctuation, so "Cat," and "cat" match; punctuation alone is never
highlighted. The output is a list of (text, changed) segments per sentence
that the template escapes, so sentences stay plain text.
"""

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\S+|\s+")
_EDGE_PUNCTUATION = re.compile(r"^\W+|\W+$")


@dataclass(frozen=True)
class Segment:
    text: str
    changed: bool


def _comparison_key(word):
    return _EDGE_PUNCTUATION.sub("", word).casefold()


def _words(sentence):
    """Tokens (words and the whitespace between them) with the indices of the comparable words."""
    tokens = _TOKEN.findall(sentence)
    word_indices = [i for i, token in enumerate(tokens) if not token.isspace() and _comparison_key(token)]
    return tokens, word_indices


def _changed_token_indices(tokens, word_indices, opcodes, side):
    changed = set()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        start, end = (i1, i2) if side == 0 else (j1, j2)
        changed.update(word_indices[start:end])
    return changed


def _segments(tokens, changed):
    """Merge neighbouring tokens with the same state; whitespace between two changed words stays highlighted."""
    segments = []
    for i, token in enumerate(tokens):
        if token.isspace():
            is_changed = (i - 1 in changed) and (i + 1 in changed)
        else:
            is_changed = i in changed
        if segments and segments[-1].changed == is_changed:
            segments[-1] = Segment(segments[-1].text + token, is_changed)
        else:
            segments.append(Segment(token, is_changed))
    return segments


def word_diff(first, second):
    """Return (segments of first, segments of second) with the differing words marked changed."""
    tokens_a, words_a = _words(first)
    tokens_b, words_b = _words(second)
    keys_a = [_comparison_key(tokens_a[i]) for i in words_a]
    keys_b = [_comparison_key(tokens_b[i]) for i in words_b]
    opcodes = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False).get_opcodes()
    changed_a = _changed_token_indices(tokens_a, words_a, opcodes, side=0)
    changed_b = _changed_token_indices(tokens_b, words_b, opcodes, side=1)
    return _segments(tokens_a, changed_a), _segments(tokens_b, changed_b)
