"""PEM's criteria's worked examples shown in the guidelines: one per criterion, written for Parasol."""

from django.utils.translation import gettext_lazy as _

from annotation.diff import word_diff

# PEM's criteria: one worked example per criterion (original, paraphrase, that criterion's rating, why).
CRITERIA_EXAMPLES = [
    (
        _("Adequacy"),
        "The museum is closed on Mondays.",
        "On Mondays the museum does not open.",
        5,
        _("Every part of the meaning is kept, although the words change."),
    ),
    (
        _("Fluency"),
        "The children are playing in the garden.",
        "In the garden playing the children are.",
        2,
        _("The meaning survives, but no one writes English in this order."),
    ),
    (
        _("Lexical dissimilarity"),
        "He quickly finished his homework.",
        "He finished his homework quickly.",
        1,
        _("The same words, only moved: the wording hardly changed."),
    ),
    (
        _("Overall"),
        "The storm damaged several roofs in the village.",
        "Several houses in the village lost part of their roofs in the storm.",
        5,
        _("Meaning kept, fluent, and newly worded: an excellent paraphrase."),
    ),
]


def guideline_examples():
    """The criteria task type's examples with their highlighted differences."""
    examples = []
    for criterion, first, second, rating, why in CRITERIA_EXAMPLES:
        first_segments, second_segments = word_diff(first, second)
        examples.append(
            {"criterion": criterion, "first": first_segments, "second": second_segments, "rating": rating, "why": why}
        )
    return examples
