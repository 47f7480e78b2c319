"""WER against hand-computed values: (substitutions + deletions + insertions) / source words."""

import pytest

from metrics import LOWER, get_metric
from metrics.wer import word_edits


@pytest.fixture(scope="module")
def wer():
    return get_metric("wer")


@pytest.mark.parametrize(
    ("source", "hypothesis", "edits", "expected"),
    [
        ("the cat sat on the mat", "the cat sat on the mat", (0, 0, 0, 6), 0.0),
        # "the" before "mat" deleted: 1 / 6.
        ("the cat sat on the mat", "the cat sat on mat", (0, 1, 0, 6), 1 / 6),
        # b -> x substituted, d inserted: 2 / 3.
        ("a b c", "a x c d", (1, 0, 1, 3), 2 / 3),
        # Case and punctuation count: "Hello," and "world!" are both substituted.
        ("Hello, world!", "hello world", (2, 0, 0, 2), 1.0),
        # A longer hypothesis can exceed 1: one substitution and two insertions over one word.
        ("yes", "no no no", (1, 0, 2, 1), 3.0),
        # Repeated and surrounding spaces are not words.
        ("  the   cat ", "the cat", (0, 0, 0, 2), 0.0),
    ],
)
def test_it_matches_hand_computed_values(wer, source, hypothesis, edits, expected):
    assert word_edits(source, hypothesis) == edits
    assert wer.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(expected)]


def test_it_scores_each_pair_on_its_own(wer):
    # Pooled over the two pairs jiwer would give 1 / 8; per pair it is 0 and 1 / 2.
    assert wer.score(sources=["a b c d e f", "g h"], hypotheses=["a b c d e f", "g"]) == [0.0, 0.5]


def test_it_is_a_distance_with_a_signature(wer):
    assert wer.direction == LOWER
    assert wer.signature()["metric"] == "wer" and wer.signature()["impl"].startswith("jiwer-")
