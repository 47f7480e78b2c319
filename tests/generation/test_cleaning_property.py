"""The cleaner never returns a continuation's text: outputs built from a true answer plus what models add
around it (a preamble, the question restated, a list marker, a label, quotes, whitespace, the next
example of the template's own format, cut anywhere) give the true answer or the one expected rejection,
for every registered template (hypothesis)."""

import pytest
from hypothesis import HealthCheck, assume, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from generation.cleaning import A2, CHAT, PARATAG, Cleaner, Rejection, clean_output, comparable
from generation.templates import BUILTIN_TEMPLATES, ChatTemplate

# Words with the formats' label names among them ("A", "B", "premise", "paraphrase"): without a colon
# after them, in a sentence, they are words. No word starts a refusal or says "as an AI".
WORDS = (
    "the report profits rose quarter five percent dog barks market fell a new old in on morning cat "
    "water A B premise paraphrase said that sentence answer original source output kernel release"
).split()
CUSTOM_CHAT = ChatTemplate("chat-custom", (("user", "Rewrite this sentence in other words: {source}"),))
TEMPLATES = {**BUILTIN_TEMPLATES, CUSTOM_CHAT.name: CUSTOM_CHAT}
LABELS = {A2.name: [("A", "B")], PARATAG.name: [("Premise", "Paraphrase")]}
LABELS[CHAT.name] = [("Original", "Paraphrase"), ("Sentence", "Output"), ("User", "Answer")]
QUOTE_PAIRS = [("", ""), ('"', '"'), ("“", "”"), ("«", "»")]
# (preamble, only before a labelled answer: an unlabelled sentence above an unlabelled one is the answer)
PREAMBLES = [("Here is a paraphrase:", False), ("Sure!", False), ("I would be glad to help.", True)]


@st.composite
def sentences(draw):
    words = draw(st.lists(st.sampled_from(WORDS), min_size=3, max_size=12))
    return " ".join([words[0].capitalize(), *words[1:]]) + draw(st.sampled_from([".", "!", ""]))


@st.composite
def outputs(draw):
    """(template name, source, raw output, finished, expected text, expected reason, the continuation's texts)."""
    name = draw(st.sampled_from(sorted(TEMPLATES)))
    answer_format = TEMPLATES[name].answer_format
    question, label = draw(st.sampled_from(LABELS[answer_format.name]))
    source, answer = draw(sentences()), draw(sentences())
    space = draw(st.sampled_from(["", " ", "  ", "\t"]))
    raw = draw(st.sampled_from(["", " ", "\n", " \n "]))  # what a chat template leaves before the answer

    labelled = draw(st.booleans()) or answer_format is A2 and draw(st.booleans())
    preamble, needs_label = draw(st.sampled_from([(None, False), *PREAMBLES]))
    preamble = preamble if (preamble and (labelled or not needs_label)) else None
    if preamble:
        raw += preamble + draw(st.sampled_from(["\n", "\n\n"]))
    if draw(st.booleans()):  # the question restated before the answer
        open_, close = draw(st.sampled_from(QUOTE_PAIRS))
        raw += f"{question}:{space}{open_}{source}{close}\n"
    listed = draw(st.sampled_from(["", "1. ", "- "]))
    open_, close = draw(st.sampled_from(QUOTE_PAIRS))
    bold = draw(st.sampled_from(["", "**"]))
    raw += listed
    if labelled:
        raw += f"{bold}{label}:{bold}" + draw(st.sampled_from([space, "\n"]))
    raw += f"{open_}{answer}{close}"

    # The next example, in the template's format: on a new line, or on the same line where the
    # format's spelling allows it (A.2 after quotes, ParaTag's labels), and cut anywhere after its label.
    other_source, other_answer = draw(sentences()), draw(sentences())
    assume(comparable(other_source) != comparable(source))  # else the next example restates the question
    go_on = draw(st.sampled_from(["none", "newline", "inline"]))
    if go_on == "inline" and answer_format is CHAT:
        go_on = "newline"  # a chat answer has no same-line example to recognise
    quoted = '"' if answer_format is A2 else ""
    continuation = f"{question}:{space}{quoted}{other_source}{quoted}\n{label}: {quoted}{other_answer}{quoted}\n"
    if go_on != "none":
        cut = draw(st.integers(min_value=len(f"{question}:{space}{quoted}") + 1, max_value=len(continuation)))
        raw += draw(st.sampled_from(["\n", "\n\n", " \n"]) if go_on == "newline" else st.just(" "))
        raw += continuation[:cut]
    else:
        raw += draw(st.sampled_from(["", "\n", "  "]))
    finished = draw(st.booleans())

    text = " ".join(answer.split())
    line_ended = go_on == "newline" or (go_on == "none" and raw.rstrip(" ").endswith("\n"))
    whole = finished or go_on != "none" or line_ended or bool(close)
    on_the_line = not (preamble or listed) and (line_ended or (go_on == "none" and finished))
    if comparable(text) == comparable(source):
        reason = Rejection.COPY
    elif not whole:
        reason = Rejection.TRUNCATED
    elif answer_format.pattern and not on_the_line:
        reason = Rejection.PATTERN
    elif len(text) > 3 * len(source):
        reason = Rejection.TOO_LONG
    else:
        reason = ""
    return name, source, raw, finished, text, reason, (other_source, other_answer)


@hypothesis_settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(outputs())
@example(
    (
        "paratag",
        "Profits increased by five percent this quarter.",
        " Profits rose five percent in the quarter.\nPremise: The dog barks.\nParaphrase: A dog is barking.",
        True,
        "Profits rose five percent in the quarter.",
        "",
        ("The dog barks.", "A dog is barking."),
    )
)
def test_the_cleaner_gives_the_true_answer_or_its_rejection_never_a_continuation(case):
    name, source, raw, finished, text, reason, continuation = case
    template = TEMPLATES[name]
    cleaned = Cleaner(template.answer_format, pattern_filter=True).clean(raw, source, finished=finished)
    assert (cleaned.text, cleaned.reject_reason) == (text, reason), raw
    for sentence in continuation:
        assert comparable(sentence) not in comparable(cleaned.text) or comparable(sentence) in comparable(text)


# The shapes, for the ParaTag and A.2 formats: the answer, never the next example's paraphrase.
SOURCE = "Profits increased by five percent this quarter."
ANSWER = "Profits rose five percent in the quarter."
CONTINUED = [
    f"{ANSWER}\nPremise: The dog barks.\nParaphrase: A dog is barking.",
    f" {ANSWER} Premise: The dog barks. Paraphrase: A dog is barking.",
    f"{ANSWER}\n\nPremise: The dog barks.\nParaphrase: A dog is barking.\nPremise: Cats",
    f"Paraphrase: {ANSWER}\nPremise: The dog barks.\nParaphrase: A dog is barking.",
    f'"{ANSWER}"\nA: "The dog barks."\nB: "A dog is barking."',
    f'B: "{ANSWER}" A: "The dog barks." B: "A dog is barking."',
    f'{ANSWER}\nA: "The dog barks."\nB: "A dog is barking."',
    f'B: "{ANSWER}"A: "The dog barks."B: "A dog is barking."',
]


@pytest.mark.parametrize("raw", CONTINUED)
@pytest.mark.parametrize("name", ["paratag", "naive", "naive-system", "vulgar"])
def test_it_never_returns_the_next_examples_paraphrase(raw, name):
    cleaned = Cleaner(BUILTIN_TEMPLATES[name].answer_format).clean(raw, SOURCE, finished=False)
    assert "dog" not in cleaned.text
    assert (cleaned.text, cleaned.reject_reason) == (ANSWER, "")


def test_an_example_before_any_answer_is_rejected_with_its_reason():
    cleaned = clean_output("Premise: The dog barks.\nParaphrase: A dog is barking.", SOURCE, answer_format=PARATAG)
    assert (cleaned.text, cleaned.reject_reason) == ("", Rejection.NO_ANSWER)


def test_the_templates_formats_come_from_their_last_turn():
    formats = {name: template.answer_format for name, template in BUILTIN_TEMPLATES.items()}
    assert formats == {"naive": A2, "naive-system": A2, "vulgar": A2, "paratag": PARATAG}
    assert CUSTOM_CHAT.answer_format is CHAT
