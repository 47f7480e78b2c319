import pytest

from scoring.metrics.words import word_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The cat sat.", ["The", "cat", "sat", "."]),
        ("It's a well-known fact, isn't it?", ["It's", "a", "well-known", "fact", ",", "isn't", "it", "?"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("Prix: 3,5 €", ["Prix", ":", "3", ",", "5", "€"]),
        ("", []),
    ],
)
def test_it_splits_words_and_punctuation(text, tokens):
    assert word_tokens(text) == tokens
