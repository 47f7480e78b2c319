import math

import pytest
from sacrebleu.metrics import BLEU

from metrics import HIGHER, get_metric
from metrics.bleu import basic_english, bleu_statistics

TOKENS = [
    # torchtext's own docstring example first
    ("You can now install TorchText using pip!", ["you", "can", "now", "install", "torchtext", "using", "pip", "!"]),
    ('He said "hi", (twice).', ["he", "said", "hi", ",", "(", "twice", ")", "."]),
    ("Don't; stop: now?", ["don", "'", "t", "stop", "now", "?"]),
    ("one<br />two", ["one", "two"]),
    ("  many   spaces\tand\ttabs ", ["many", "spaces", "and", "tabs"]),
]

SCORES = [
    # hypothesis, source, expected, worked out by hand below the table
    ("The quick brown fox jumps over the dog", "the quick brown fox jumped over the lazy dog",
     # precisions 7/8, 4/7, 2/6, 1/5 (product 1/30); 8 tokens against 9: BP = exp(1 - 9/8)
     math.exp(1 - 9 / 8) * (1 / 30) ** 0.25),
    ("the cat sat on the mat", "the cat is on the mat", 0.0),  # no 4-gram in common, no smoothing
    ("A cat, on the mat!", "a cat , on the mat !", 1.0),  # same tokens once tokenised
    ("the quick brown fox jumped over the lazy dog today", "the quick brown fox jumped over the lazy dog",
     # 9/10, 8/9, 7/8, 6/7: longer than the source, so no brevity penalty
     (9 / 10 * 8 / 9 * 7 / 8 * 6 / 7) ** 0.25),
    ("", "a source", 0.0),
]  # fmt: skip

PAIRS = [
    ("The cat is alive.", "The cat was alive."),
    ("Flights from New York to Florida.", "Flights from Florida to New York."),
    ("He can't take the joke.", "He can't take the joker."),
    ("How does it feel to be pregnant?", "How does it look to have a bun in the oven?"),
    ("Last year, Bush appointed him to the Homeland Security Advisory Council.",
     "He has also served on the president's Homeland Security Advisory Council."),
    ("a b c d e f g h", "a b c d x f g h a b c d"),
]  # fmt: skip


@pytest.fixture(scope="module")
def bleu():
    return get_metric("bleu")


@pytest.mark.parametrize(("text", "tokens"), TOKENS)
def test_it_tokenises_like_torchtext_basic_english(text, tokens):
    assert basic_english(text) == tokens


@pytest.mark.parametrize(("hypothesis", "source", "expected"), SCORES)
def test_it_matches_hand_computed_bleu(bleu, hypothesis, source, expected):
    assert bleu.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(expected, abs=1e-12)]


@pytest.mark.parametrize(("source", "hypothesis"), PAIRS + [(s, h) for h, s, _ in SCORES])
def test_it_equals_sacrebleu_without_tokenisation_or_smoothing(bleu, source, hypothesis):
    sacre = BLEU(tokenize="none", smooth_method="none", effective_order=False)
    expected = sacre.sentence_score(" ".join(basic_english(hypothesis)), [" ".join(basic_english(source))]).score
    assert bleu.score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(expected / 100, abs=1e-9)]


def test_it_keeps_statistics_apart_from_the_score():
    matches, totals, hypothesis_length, reference_length = bleu_statistics(list("abcab"), list("abcd"))
    assert (matches, totals, hypothesis_length, reference_length) == ([3, 2, 1, 0], [5, 4, 3, 2], 5, 4)


def test_higher_means_closer(bleu):
    assert bleu.direction == HIGHER
    assert bleu.signature()["tok"] == "torchtext-basic_english"
