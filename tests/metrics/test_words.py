import pytest

from metrics.words import TOKENISATION, word_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The cat sat.", ["The", "cat", "sat", "."]),
        ("It's a well-known fact, isn't it?", ["It's", "a", "well-known", "fact", ",", "isn't", "it", "?"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("", []),
        # Real news text (MRPC-like): a price, a percentage, a decimal, a share price are one chip each.
        (
            "The A$4.56 bid rose 4.4% to US$1,000.50.",
            ["The", "A$4.56", "bid", "rose", "4.4%", "to", "US$1,000.50", "."],
        ),
        (
            "Shares fell 3.8 per cent, or $1.17, to $29.75.",
            ["Shares", "fell", "3.8", "per", "cent", ",", "or", "$1.17", ",", "to", "$29.75", "."],
        ),
        ("Prix : 3,5 € ou 5€", ["Prix", ":", "3,5", "€", "ou", "5€"]),
        ("£2.3bn in 1990s", ["£2.3bn", "in", "1990s"]),
        # Dates and times.
        ("On 2024-03-12 at 10:30, or 12/03/2024.", ["On", "2024-03-12", "at", "10:30", ",", "or", "12/03/2024", "."]),
        # Hyphenated words, with or without a number.
        ("A 20-year-old e-mail, 5km long", ["A", "20-year-old", "e-mail", ",", "5km", "long"]),
        # URLs and e-mail addresses, their closing punctuation left out.
        (
            "See https://example.com/a?b=1. Or www.example.org!",
            ["See", "https://example.com/a?b=1", ".", "Or", "www.example.org", "!"],
        ),
        (
            "(see https://en.wikipedia.org/wiki/Foo_(bar)).",
            ["(", "see", "https://en.wikipedia.org/wiki/Foo_(bar)", ")", "."],
        ),
        ("Write to a.b@example.co.uk.", ["Write", "to", "a.b@example.co.uk", "."]),
        # Initialisms and ellipses.
        ("The U.S. grew... slowly", ["The", "U.S.", "grew", "...", "slowly"]),
        # A sign is not part of a number; a sentence's last full stop is not part of one.
        ("It was -5 at 2.", ["It", "was", "-", "5", "at", "2", "."]),
    ],
)
def test_it_keeps_what_a_reader_reads_as_one_thing_whole(text, tokens):
    assert word_tokens(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("The A$4.56 bid", ["The", "A", "$", "4", ".", "56", "bid"]),
        ("4.4%", ["4", ".", "4", "%"]),
        ("Prix: 3,5 €", ["Prix", ":", "3", ",", "5", "€"]),
    ],
)
def test_version_1_is_kept_as_it_was(text, tokens):
    assert word_tokens(text, 1) == tokens


def test_whitespace_never_becomes_a_token_and_nothing_else_is_lost():
    text = "Visit https://x.org/(a) — costs A$4.56 (4.4%)… ok? “Yes”, 1,000,000!"
    for version in (1, TOKENISATION):
        assert "".join(word_tokens(text, version)) == "".join(text.split())
