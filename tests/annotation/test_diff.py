import pytest

from annotation.diff import word_diff


def changed_words(segments):
    return [s.text.strip() for s in segments if s.changed]


@pytest.mark.parametrize(
    "first, second, changed_first, changed_second",
    [
        ("The cat drinks water.", "The cat drinks milk.", ["water."], ["milk."]),
        ("the Cat drinks water", "The cat, drinks water!", [], []),
        ("Flights from Paris to Rome", "Flights from Rome to Paris", ["to Rome"], ["Rome to"]),
        ("He bought a red bike.", "He bought a bike.", ["red"], []),
        ("Same sentence.", "Same sentence.", [], []),
    ],
)
def test_it_highlights_only_the_differing_words(first, second, changed_first, changed_second):
    segments_a, segments_b = word_diff(first, second)
    assert changed_words(segments_a) == changed_first
    assert changed_words(segments_b) == changed_second


def test_it_keeps_the_sentence_text_intact():
    first, second = "A  quick, brown fox!", "A slow brown fox?"
    segments_a, segments_b = word_diff(first, second)
    assert "".join(s.text for s in segments_a) == first
    assert "".join(s.text for s in segments_b) == second


def test_it_never_highlights_punctuation_alone():
    segments_a, _ = word_diff("Yes , it works .", "Yes it works")
    assert changed_words(segments_a) == []
