import pytest

from annotation.diff import MAX_HIGHLIGHT_CHARS, word_diff
from annotation.tasktypes.similarity.guidelines import guideline_examples


def changed_words(segments):
    return [s.text.strip() for s in segments if s.changed]


@pytest.mark.parametrize(
    "first, second, changed_first, changed_second",
    [
        ("The cat drinks water.", "The cat drinks milk.", ["water."], ["milk."]),
        ("the Cat drinks water", "The cat, drinks water!", [], []),
        # Moved words have a counterpart: a pure reordering highlights nothing.
        ("Flights from Paris to Rome", "Flights from Rome to Paris", [], []),
        ("The bakery opens at seven every morning.", "Every morning the bakery opens at seven.", [], []),
        ("He bought a red bike.", "He bought a bike.", ["red"], []),
        ("Same sentence.", "Same sentence.", [], []),
        # A multiset: the second "the" has no second counterpart.
        ("the dog and the cat", "the dog and a cat", ["the"], ["a"]),
    ],
)
def test_it_highlights_only_the_words_without_counterpart(first, second, changed_first, changed_second):
    segments_a, segments_b = word_diff(first, second)
    assert changed_words(segments_a) == changed_first
    assert changed_words(segments_b) == changed_second


def test_a_pure_reordering_highlights_nothing():
    segments_a, segments_b = word_diff("Anna wrote the letter every morning.", "Every morning, the letter Anna wrote.")
    assert not any(s.changed for s in segments_a + segments_b)


def test_a_substitution_highlights_exactly_the_substituted_words_on_both_sides():
    segments_a, segments_b = word_diff(
        "Our neighbours painted their fence blue last week.", "Last week our neighbours painted their house blue."
    )
    assert changed_words(segments_a) == ["fence"]
    assert changed_words(segments_b) == ["house"]


def test_the_guidelines_same_meaning_example_highlights_only_what_changed():
    example = next(e for e in guideline_examples() if e["answer"] == "same_meaning")
    assert changed_words(example["first"]) == ["was written by"]
    assert changed_words(example["second"]) == ["wrote"]


def test_it_keeps_the_sentence_text_intact():
    first, second = "A  quick, brown fox!", "A slow brown fox?"
    segments_a, segments_b = word_diff(first, second)
    assert "".join(s.text for s in segments_a) == first
    assert "".join(s.text for s in segments_b) == second


def test_it_never_highlights_punctuation_alone():
    segments_a, _ = word_diff("Yes , it works .", "Yes it works")
    assert changed_words(segments_a) == []


def test_long_repetitive_sentences_are_matched_exactly():
    first = " ".join(["same"] * 1500 + ["only-first"])
    second = " ".join(["same"] * 1499 + ["only-second"])
    segments_a, segments_b = word_diff(first, second)
    assert changed_words(segments_a) == ["same only-first"] and changed_words(segments_b) == ["only-second"]
    assert "".join(s.text for s in segments_a) == first


def test_past_the_length_bound_it_highlights_nothing_and_keeps_the_text():
    first, second = "a " * MAX_HIGHLIGHT_CHARS, "b " * MAX_HIGHLIGHT_CHARS
    segments_a, segments_b = word_diff(first, second)
    assert [(s.text, s.changed) for s in segments_a] == [(first, False)]
    assert [(s.text, s.changed) for s in segments_b] == [(second, False)]
