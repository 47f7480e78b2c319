"""Every default training explanation agrees with what the judge sees: the words it names as highlighted
(or without counterpart) are the ones annotation/diff.py highlights, the words it names as tagged are the
reference's, and each task type's texts speak of its own task (no tagging where nothing is tagged, no
yellow where none is shown)."""

import pytest

from annotation.diff import word_diff
from campaigns.models import Campaign, load_default_training_rows, tokens_of
from campaigns.task_types import get_task_type
from tests.annotation.explanations import (
    claim_problems,
    marked_words,
    speaks_of_highlight,
    speaks_of_tagging,
    tagged_words,
)
from tests.toys import every_task_type


def tags_words(task_type):
    return "source_tags" in get_task_type(task_type).answer_form.base_fields


def shows_highlight(task_type):
    """Whether a campaign of this type, as created, shows the judge the yellow highlight."""
    return get_task_type(task_type).highlights(Campaign(task_type=task_type))


def seen_highlight(source, hypothesis, shown=True):
    """The two sentences' words, marked where the judge sees yellow."""
    sentences = word_diff(source, hypothesis)
    return [[(word, marked and shown) for word, marked in marked_words(segments)] for segments in sentences]


def reference_of(row):
    tokens = tokens_of(row["source"], row["hypothesis"])
    return [
        tagged_words(tokens["source"], row["source_tags"]),
        tagged_words(tokens["hypothesis"], row["hypothesis_tags"]),
    ]


@every_task_type
def test_every_default_explanation_agrees_with_the_highlight_and_the_reference(task_type):
    shown = shows_highlight(task_type)
    for row in load_default_training_rows(task_type):
        explanation = row.get("explanation", "")  # optional: a type without feedback shows none
        reference = reference_of(row) if tags_words(task_type) else None
        highlight = seen_highlight(row["source"], row["hypothesis"], shown)
        assert claim_problems(explanation, highlight, reference) == [], explanation


@every_task_type
def test_every_default_explanation_speaks_of_its_own_task(task_type):
    for row in load_default_training_rows(task_type):
        explanation = row.get("explanation", "")
        assert tags_words(task_type) or not speaks_of_tagging(explanation), explanation
        assert shows_highlight(task_type) or not speaks_of_highlight(explanation), explanation


@every_task_type
def test_the_guideline_examples_agree_with_their_highlight(task_type):
    for example in get_task_type(task_type).guideline_examples():
        highlight = [marked_words(example["first"]), marked_words(example["second"])]
        why = str(example["why"])
        assert claim_problems(why, highlight) == [], why
        assert tags_words(task_type) or not speaks_of_tagging(why), why


BAKERY = ("The bakery opens at seven every morning.", "Every morning the bakery opens its doors at seven.")
UMBRELLA = ("She forgot her umbrella on the bus.", "She left her umbrella at the office.")


@pytest.mark.parametrize(
    ("pair", "explanation"),
    [
        # The explanations issue 37 found: the highlight marks "its doors" and forgot/on/left/at too.
        (BAKERY, "“Opens its doors” says “opens” in more words, and every word has a counterpart."),
        (UMBRELLA, "The place differs, so only “bus” and “office” have no counterpart."),
        (BAKERY, "Only “doors” is highlighted."),
        (BAKERY, "“The bakery” is highlighted."),
        (BAKERY, "“Its doors” only moved."),
        (UMBRELLA, "Nothing is highlighted."),
        (UMBRELLA, "“Umbrella” has no counterpart."),
        (UMBRELLA, "Yellow marks “train”."),
    ],
)
def test_the_check_finds_an_explanation_that_contradicts_the_highlight(pair, explanation):
    assert claim_problems(explanation, seen_highlight(*pair))


def test_the_check_finds_a_tagging_claim_the_reference_contradicts():
    tokens = tokens_of(*UMBRELLA)
    reference = [tagged_words(tokens[side], [0, 0, 0, 0, 0, 0, 1, 0]) for side in ("source", "hypothesis")]
    highlight = seen_highlight(*UMBRELLA)
    assert claim_problems("Tag “bus” and “office”, nothing else.", highlight, reference) == []
    assert claim_problems("Tag “umbrella”.", highlight, reference)
    assert claim_problems("Tag only “bus”.", highlight, reference)
    assert claim_problems("The meaning is the same: nothing to tag.", highlight, reference)


def test_the_check_finds_tagging_words_in_a_similarity_text():
    # Issue 37: similarity campaigns were told "nothing to tag".
    assert speaks_of_tagging("Same meaning, nothing to tag.")
    assert not speaks_of_tagging("The meaning is the same.")
