"""Word-level differences between two sentences, for the yellow highlight.

A word is highlighted when it has no counterpart in the other sentence: the words
of each sentence are matched as multisets (each occurrence in one sentence pairs
with at most one occurrence in the other, leftmost first), so a word that only
moved is not highlighted and a reordering shows no change at all. Words are
compared case-insensitively and without their surrounding punctuation, so "Cat,"
and "cat" match; punctuation alone is never highlighted. The output is a list of
(text, changed) segments per sentence that the template escapes, so sentences
stay plain text.

Matching counts words in one pass per sentence (linear time); beyond
MAX_HIGHLIGHT_CHARS nothing is highlighted, so no sentence can stall the page.
"""

import re
from collections import Counter
from dataclasses import dataclass

_TOKEN = re.compile(r"\S+|\s+")
_EDGE_PUNCTUATION = re.compile(r"^\W+|\W+$")
MAX_HIGHLIGHT_CHARS = 20_000


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


def _segments(tokens, changed):
    """Merge neighbouring tokens with the same state; whitespace between two changed words stays highlighted."""
    runs = []  # [changed, [tokens]]: joined once at the end, so long sentences stay linear
    for i, token in enumerate(tokens):
        if token.isspace():
            is_changed = (i - 1 in changed) and (i + 1 in changed)
        else:
            is_changed = i in changed
        if runs and runs[-1][0] == is_changed:
            runs[-1][1].append(token)
        else:
            runs.append([is_changed, [token]])
    return [Segment("".join(parts), is_changed) for is_changed, parts in runs]


def _unmatched(keys, word_indices, other_keys):
    """The token indices of the words left over once each is paired with an unused equal word of the other sentence."""
    available = Counter(other_keys)
    changed = set()
    for index, key in zip(word_indices, keys, strict=True):
        if available[key] > 0:
            available[key] -= 1
        else:
            changed.add(index)
    return changed


def word_diff(first, second):
    """Return (segments of first, segments of second) with the words that have no counterpart marked changed."""
    if len(first) + len(second) > MAX_HIGHLIGHT_CHARS:
        return [Segment(first, False)], [Segment(second, False)]
    tokens_a, words_a = _words(first)
    tokens_b, words_b = _words(second)
    keys_a = [_comparison_key(tokens_a[i]) for i in words_a]
    keys_b = [_comparison_key(tokens_b[i]) for i in words_b]
    changed_a = _unmatched(keys_a, words_a, keys_b)
    changed_b = _unmatched(keys_b, words_b, keys_a)
    return _segments(tokens_a, changed_a), _segments(tokens_b, changed_b)
