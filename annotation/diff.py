"""Word-level differences between two sentences, for the yellow highlight.

Words are compared case-insensitively and without their surrounding
punctuation, so "Cat," and "cat" match; punctuation alone is never
highlighted. The output is a list of (text, changed) segments per sentence
that the template escapes, so sentences stay plain text.

The alignment's cost grows faster than (words in one) x (words in the other)
on repetitive text; beyond MAX_ALIGNED_WORD_PAIRS the highlight marks the words
missing from the other sentence instead, in linear time, and beyond
MAX_HIGHLIGHT_CHARS nothing is highlighted, so no sentence can stall the page.
"""

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\S+|\s+")
_EDGE_PUNCTUATION = re.compile(r"^\W+|\W+$")
# 200 x 200 words: about 0.15 s of SequenceMatcher on the worst (repetitive) input
# found; real sentences (tens of words) are far below.
MAX_ALIGNED_WORD_PAIRS = 40_000
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


def _changed_token_indices(word_indices, opcodes, side):
    changed = set()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            continue
        start, end = (i1, i2) if side == 0 else (j1, j2)
        changed.update(word_indices[start:end])
    return changed


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


def _aligned_changes(keys_a, keys_b, words_a, words_b):
    opcodes = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False).get_opcodes()
    return _changed_token_indices(words_a, opcodes, side=0), _changed_token_indices(words_b, opcodes, side=1)


def _unaligned_changes(keys_a, keys_b, words_a, words_b):
    """The cheap highlight for very long sentences: words that the other sentence lacks."""
    set_a, set_b = set(keys_a), set(keys_b)
    changed_a = {index for index, key in zip(words_a, keys_a, strict=True) if key not in set_b}
    changed_b = {index for index, key in zip(words_b, keys_b, strict=True) if key not in set_a}
    return changed_a, changed_b


def word_diff(first, second):
    """Return (segments of first, segments of second) with the differing words marked changed."""
    if len(first) + len(second) > MAX_HIGHLIGHT_CHARS:
        return [Segment(first, False)], [Segment(second, False)]
    tokens_a, words_a = _words(first)
    tokens_b, words_b = _words(second)
    keys_a = [_comparison_key(tokens_a[i]) for i in words_a]
    keys_b = [_comparison_key(tokens_b[i]) for i in words_b]
    if len(keys_a) * len(keys_b) <= MAX_ALIGNED_WORD_PAIRS:
        changed_a, changed_b = _aligned_changes(keys_a, keys_b, words_a, words_b)
    else:
        changed_a, changed_b = _unaligned_changes(keys_a, keys_b, words_a, words_b)
    return _segments(tokens_a, changed_a), _segments(tokens_b, changed_b)
