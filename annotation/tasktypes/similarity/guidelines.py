"""The 5-way scale's worked examples shown in the guidelines: one per answer, written for Parasol."""

from django.utils.translation import gettext_lazy as _

from annotation.diff import word_diff
from annotation.models import Answer

EXAMPLES = [
    (
        Answer.VERY_DIFFERENT,
        "The kettle in the kitchen is boiling.",
        "The last train leaves at noon.",
        _("Nothing is shared: different things, different events."),
    ),
    (
        Answer.SLIGHTLY_SIMILAR,
        "My sister plays the violin in an orchestra.",
        "My sister sells violins in a shop.",
        _("Same person and same instrument, but playing is not selling: the main fact differs."),
    ),
    (
        Answer.MOSTLY_SIMILAR,
        "He bought a red bicycle yesterday.",
        "Yesterday he bought a bicycle.",
        _("The event is the same; only a detail (the colour) is missing from the second sentence."),
    ),
    (
        Answer.SAME_MEANING,
        "The letter was written by Anna.",
        "Anna wrote the letter.",
        _("The words and the order change, the meaning does not."),
    ),
    (
        Answer.DONT_KNOW,
        "The window sings quietly at dawn.",
        "Window dawn the quietly sings at.",
        _("The second sentence makes no sense, so their meanings cannot be compared."),
    ),
]


def guideline_examples():
    """The examples with their highlighted differences, ready for the template."""
    examples = []
    for answer, first, second, why in EXAMPLES:
        first_segments, second_segments = word_diff(first, second)
        examples.append({"answer": answer, "first": first_segments, "second": second_segments, "why": why})
    return examples
