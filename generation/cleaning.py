"""Output cleaning: the hypothesis in a model's raw answer, or why it is rejected (no Django here)."""

import re
from dataclasses import dataclass
from enum import StrEnum


class Rejection(StrEnum):
    """Why an output is not made a pair; the value is stored, the label shown."""

    EMPTY = "empty", "empty output"
    REFUSAL = "refusal", "the model refused"
    COPY = "copy", "copy of the source"
    TRUNCATED = "truncated", "cut off at max_new_tokens"
    TOO_LONG = "too-long", "more than 3× the source's length"
    DUPLICATE = "duplicate", "same as another output for this source"
    BLEU_RANGE = "bleu-range", "BLEU with the source outside the run's range (ParaTag's filter)"
    LENGTHS = "lengths", "a sentence under 10 characters or 2.5× the other's words (ParaTag's filter)"

    def __new__(cls, value, label):
        member = str.__new__(cls, value)
        member._value_ = value
        member.label = label
        return member

    @classmethod
    def choices(cls):
        """(value, label) pairs for a model field's ``choices``."""
        return [(member.value, member.label) for member in cls]


@dataclass(frozen=True)
class Cleaned:
    text: str
    reject_reason: str = ""  # a Rejection value, "" when accepted

    @property
    def accepted(self):
        return not self.reject_reason


QUOTES = {'"': '"', "“": "”", "'": "'", "‘": "’", "«": "»", "„": "“"}
# "B:" answers the ParaPLUIE paper's templates, "Paraphrase:" ParaTag's; "A:" and "Premise:" start another example.
ANSWER_LABEL = re.compile(r"(?:^|\n)[ \t*]*(?:B|Paraphrase)[ \t]*:[ \t*]*", re.IGNORECASE)
NEXT_EXAMPLE = re.compile(
    r"\n[ \t*]*(?:A|Premise)[ \t]*:|[ \t]+A[ \t]*:[ \t]*[\"“]|[ \t]+Premise[ \t]*:", re.IGNORECASE
)
REFUSAL_START = re.compile(
    r"^(?:i\s+(?:cannot|can't|can\s+not|won't|will\s+not|apologi[sz]e)|i'm\s+(?:sorry|not\s+able|unable)"
    r"|i\s+am\s+(?:sorry|not\s+able|unable)|sorry\b)",
    re.IGNORECASE,
)
AI_DISCLAIMER = re.compile(r"\bas an ai\b|\bas a language model\b|\bi'm an ai\b", re.IGNORECASE)
MAX_LENGTH_RATIO = 3


def clean_output(raw, source, *, finished=True):
    """The hypothesis in a raw output, or the reason it is rejected.

    Keeps the first ``B: "..."`` answer (the model may go on with a new ``A:``
    example), drops the label, the quotes and a preamble line ending in ':',
    and normalises whitespace. ``finished`` is False when generation stopped at
    max_new_tokens rather than at the end of the turn.
    """
    text = raw.replace("\r\n", "\n").strip()
    label = ANSWER_LABEL.search(text)
    if label:
        text = text[label.end() :]
    text = NEXT_EXAMPLE.split(text, maxsplit=1)[0]
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        lines = lines[1:]  # "Here is a paraphrase:" and the answer below it
    text = _unquote(lines[0]) if lines else ""
    text = " ".join(text.split())
    # A paraphrase may start with "I cannot ..."; an unlabelled answer that does is a refusal.
    refused = AI_DISCLAIMER.search(raw) or (not label and REFUSAL_START.match(text))
    if not re.search(r"\w", text):
        return Cleaned(text, Rejection.EMPTY)
    if refused:
        return Cleaned(text, Rejection.REFUSAL)
    if comparable(text) == comparable(source):
        return Cleaned(text, Rejection.COPY)
    if not finished:
        return Cleaned(text, Rejection.TRUNCATED)
    if len(text) > MAX_LENGTH_RATIO * len(source.strip()):
        return Cleaned(text, Rejection.TOO_LONG)
    return Cleaned(text)


def _unquote(line):
    closing = QUOTES.get(line[:1])
    if closing is None:
        return line
    end = line.rfind(closing, 1)
    return line[1:end] if end > 0 else line[1:]


def comparable(text):
    """Case, punctuation and spacing do not make a paraphrase."""
    return re.sub(r"[\W_]+", "", text.casefold())
