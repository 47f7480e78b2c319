import pytest

from annotation.diff import MAX_ALIGNED_WORD_PAIRS, MAX_HIGHLIGHT_CHARS, word_diff


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


def test_past_the_alignment_bound_it_marks_the_words_the_other_sentence_lacks():
    words = int(MAX_ALIGNED_WORD_PAIRS**0.5) + 10
    first = " ".join(["same"] * words + ["only-first"])
    second = " ".join(["same"] * words + ["only-second"])
    segments_a, segments_b = word_diff(first, second)
    assert changed_words(segments_a) == ["only-first"] and changed_words(segments_b) == ["only-second"]
    assert "".join(s.text for s in segments_a) == first


def test_past_the_length_bound_it_highlights_nothing_and_keeps_the_text():
    first, second = "a " * MAX_HIGHLIGHT_CHARS, "b " * MAX_HIGHLIGHT_CHARS
    segments_a, segments_b = word_diff(first, second)
    assert [(s.text, s.changed) for s in segments_a] == [(first, False)]
    assert [(s.text, s.changed) for s in segments_b] == [(second, False)]
