"""Output cleaning: the hypothesis in a model's raw answer, or why it is rejected (no Django here).

A model asked with a few-shot prompt often answers and then goes on with an example of its own
(ParaPLUIE A.2's `A: "…"` / `B: "…"`, ParaTag's `Premise: …` / `Paraphrase: …`). So the cleaner
cuts at the next example *first*, and only then reads the answer: the first line left, after a
preamble ("Here is a paraphrase:") or the question restated, with a label taken only at that
line's start. Nothing after the next example can become the hypothesis: an unlabelled answer
followed by `Premise: … Paraphrase: …` gives the unlabelled answer, never the continuation's.

Every format's labels are known whatever the template (a model may drift from the prompt's
format into a chat assistant's); a template's format (`format_of`) decides whether ParaTag's
pattern filter can apply.
"""

import re
from dataclasses import dataclass
from enum import StrEnum


class Rejection(StrEnum):
    """Why an output is not made a pair; the value is stored, the label shown."""

    EMPTY = "empty", "empty output"
    NO_ANSWER = "no-answer", "another example before any answer"
    REFUSAL = "refusal", "the model refused"
    COPY = "copy", "copy of the source"
    TRUNCATED = "truncated", "answer cut off at max_new_tokens"
    PATTERN = "pattern", "not a 'Premise: … Paraphrase: …' line pair (ParaTag's filter)"
    TOO_LONG = "too-long", "more than 3× the source's length"
    DUPLICATE = "duplicate", "same as another output for this source"
    BLEU_RANGE = "bleu-range", "BLEU with the source outside the run's range (ParaTag's filter)"
    LENGTHS = "lengths", "a sentence under 10 characters or 2.5× the other's words (ParaTag's filter)"
    SERVER_FAILED = "server-failed", "the LLM server refused it or answered unusably (its words as the output)"

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


# Labels at a line's start, in every format: those that ask (an example's first half, or the question
# restated) and those that answer. Longer labels first, so "Sentence A" is not read as "Sentence".
QUESTION_LABELS = (
    "Original sentence",
    "Sentence A",
    "Sentence",
    "Original",
    "Premise",
    "Question",
    "Source",
    "Input",
    "Human",
    "User",
    "A",
)
ANSWER_LABELS = (
    "Paraphrased sentence",
    "Rewritten sentence",
    "Paraphrased",
    "Paraphrase",
    "Sentence B",
    "Rewritten",
    "Assistant",
    "Output",
    "Answer",
    "B",
)


def _labels(names):
    return "|".join(re.escape(name).replace(r"\ ", r"\s+") for name in names)


# Markdown around a label ("**Paraphrase:**", "> B:") is part of the label.
LINE_LABEL = re.compile(
    rf"^[>#*_\s]*(?:(?P<question>{_labels(QUESTION_LABELS)})|(?P<answer>{_labels(ANSWER_LABELS)}))[\s*_]*:[\s*_]*",
    re.IGNORECASE,
)
LIST_MARKER = re.compile(r"^(?:\d{1,2}[.)]|[-*•])\s+")
# Lines a chat assistant puts before its answer: one ending in ':', or a bare interjection.
FILLER = re.compile(r"^(?:sure|certainly|of course|okay|ok|absolutely|here you go|here it is)[\s!.,:]*$", re.I)
QUOTES = {'"': '"', "“": "”", "'": "'", "‘": "’", "«": "»", "„": "“"}
REFUSAL_START = re.compile(
    r"^(?:i\s+(?:cannot|can't|can\s+not|won't|will\s+not|apologi[sz]e)|i'm\s+(?:sorry|not\s+able|unable)"
    r"|i\s+am\s+(?:sorry|not\s+able|unable)|sorry\b)",
    re.IGNORECASE,
)
AI_DISCLAIMER = re.compile(r"\bas an ai\b|\bas a language model\b|\bi'm an ai\b", re.IGNORECASE)
# Where an example goes on within a line: A.2's after its quotes, ParaTag's anywhere (the templates' own
# spelling, case-sensitive: "the premise: ..." inside a sentence is not a label).
INLINE_EXAMPLE = re.compile(r'(?:[ \t]+|(?<=["”]))(?=(?:A|B)[ \t]*:[ \t]*["“])|[ \t]+(?=(?:Premise|Paraphrase)[ \t]*:)')
MAX_LENGTH_RATIO = 3


@dataclass(frozen=True)
class AnswerFormat:
    """How a template's examples are written; the labels are read in every format, so a format decides only
    whether ParaTag's pattern filter can apply."""

    name: str
    title: str
    # ParaTag's section 4.1 keeps only decoded "Premise: … \n Paraphrase: … \n" pairs (`Cleaner(pattern_filter)`).
    pattern: bool = False


A2 = AnswerFormat("a2", 'ParaPLUIE A.2: A: "…" / B: "…"')
PARATAG = AnswerFormat("paratag", "ParaTag 4.1: Premise: … / Paraphrase: …", pattern=True)
CHAT = AnswerFormat("chat", "a chat answer (quotes, a list, a label or a preamble)")
FORMATS = {answer_format.name: answer_format for answer_format in (A2, PARATAG, CHAT)}


def format_of(prompt):
    """The answer format a template's last user turn asks for (its text, with or without {source})."""
    if re.search(r"(?m)^\s*Premise\s*:", prompt) or re.search(r"Paraphrase\s*:\s*$", prompt):
        return PARATAG
    if re.search(r"(?m)^\s*A\s*:", prompt):
        return A2
    return CHAT


@dataclass(frozen=True)
class _Line:
    text: str
    ended: str  # "newline", "inline" (another example follows on the line) or "" (the output's end)


@dataclass(frozen=True)
class _Reading:
    """What the cleaner found: the answer's line and how it stood in the output."""

    text: str = ""
    no_answer: bool = False  # the next example came before any answer
    labelled: bool = False
    preamble: bool = False  # a line before the answer was skipped
    listed: bool = False
    quote_closed: bool = False
    ended: str = ""
    before_next: str = ""  # everything up to the next example (where a disclaimer counts)


class Cleaner:
    """The hypothesis in a raw output for one answer format, or the reason it is rejected.

    ``pattern_filter``: ParaTag's filter (section 4.1) — the answer must stand on the
    ``Paraphrase:`` line of the prompt's pair, that line ended by a newline or the end of the turn.
    """

    def __init__(self, answer_format=A2, *, pattern_filter=False):
        self.format = answer_format
        self.pattern_filter = pattern_filter and answer_format.pattern

    def clean(self, raw, source, *, finished=True):
        """``finished`` is False when generation stopped at max_new_tokens rather than at the end of the turn."""
        reading = self.read(raw, source)
        text = " ".join(reading.text.split())
        if reading.no_answer:
            return Cleaned("", Rejection.NO_ANSWER)
        if not re.search(r"\w", text):
            return Cleaned(text, Rejection.EMPTY)
        # A paraphrase may start with "I cannot ..."; an unlabelled answer that does is a refusal.
        if AI_DISCLAIMER.search(reading.before_next) or (not reading.labelled and REFUSAL_START.match(text)):
            return Cleaned(text, Rejection.REFUSAL)
        if comparable(text) == comparable(source):
            return Cleaned(text, Rejection.COPY)
        # The answer is whole when something followed it (a newline, another example, its closing quote)
        # or the turn ended: a model that goes on with examples until max_new_tokens answered all the same.
        if not (finished or reading.ended or reading.quote_closed):
            return Cleaned(text, Rejection.TRUNCATED)
        if self.pattern_filter and not self._in_pattern(reading, finished):
            return Cleaned(text, Rejection.PATTERN)
        if len(text) > MAX_LENGTH_RATIO * len(source.strip()):
            return Cleaned(text, Rejection.TOO_LONG)
        return Cleaned(text)

    def read(self, raw, source):
        """Cut at the next example, then take the answer's line (see the module's docstring)."""
        lines = self._lines(raw)
        if not lines:
            return _Reading()
        start = 0
        # A preamble: a filler or a line ending in ':' with more below, or an unlabelled line right above
        # a labelled answer or the question restated ("I'd be glad to help.\nB: ..."), before the next example.
        while start + 1 < len(lines) and self._label(lines[start].text)[0] is None:
            line, following = lines[start].text, lines[start + 1].text
            if FILLER.match(line) or line.endswith(":") or self._label(following)[0] == "answer":
                start += 1
            elif self._restates(following, source) and start + 2 < len(lines):
                start += 1
            else:
                break
        preamble = lines[:start]
        # The question restated ('A: "<source>"', "Original: <source>") before the answer.
        if start + 1 < len(lines) and self._restates(lines[start].text, source):
            start += 1
        lines = lines[start:]
        cut = next((i for i, line in enumerate(lines) if self._label(line.text)[0] == "question"), len(lines))
        if cut == 0:
            return _Reading(no_answer=True)
        region = lines[:cut]
        before_next = "\n".join(line.text for line in [*preamble, *region])
        answer = region[0]
        bare = LIST_MARKER.sub("", answer.text)
        listed = bare != answer.text
        kind, content = self._label(bare)
        if kind == "answer" and not content.strip():  # the label alone, the answer on the next line
            if len(region) < 2:
                return _Reading(labelled=True, ended=answer.ended, before_next=before_next)
            answer, content = region[1], region[1].text
        text, closed = _unquote(content.strip())
        return _Reading(
            text=text,
            labelled=kind == "answer",
            preamble=bool(preamble),
            listed=listed,
            quote_closed=closed,
            ended=answer.ended,
            before_next=before_next,
        )

    def _in_pattern(self, reading, finished):
        """On the Paraphrase line itself (no preamble, no list), and that line ended by '\\n' or the turn's end."""
        ended = reading.ended == "newline" or (reading.ended == "" and finished)
        return ended and not (reading.preamble or reading.listed)

    def _lines(self, raw):
        """The output's non-blank lines, stripped, each with what ended it; an inline example starts a line."""
        rows = raw.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        lines = []
        for number, row in enumerate(rows):
            pieces = self._split_inline(row)
            for index, piece in enumerate(pieces):
                ended = "inline" if index + 1 < len(pieces) else ("newline" if number + 1 < len(rows) else "")
                lines.append(_Line(piece.strip(), ended))
        # A line is ended by a newline even when blank lines follow it; blank lines themselves go.
        return [line for line in lines if line.text]

    @staticmethod
    def _split_inline(row):
        """The row cut where another example starts on it (never right after a list marker: "1. Paraphrase:")."""
        cuts, last = [], 0
        for match in INLINE_EXAMPLE.finditer(row):
            if re.search(r"\w", LIST_MARKER.sub("", row[last : match.start()].strip() + " ")):
                cuts.append(match.start())
                last = match.start()
        return [row[a:b] for a, b in zip([0, *cuts], [*cuts, len(row)])]

    def _restates(self, line, source):
        """Whether the line is the question asked again: a question label and the source."""
        kind, content = self._label(line)
        return kind == "question" and comparable(_unquote(content)[0]) == comparable(source)

    @staticmethod
    def _label(line):
        """("question" | "answer" | None, the line without its label); a list marker may come first."""
        match = LINE_LABEL.match(line) or LINE_LABEL.match(LIST_MARKER.sub("", line))
        if match is None:
            return None, line
        return ("question" if match.group("question") else "answer"), line[match.end() :]


def clean_output(raw, source, *, finished=True, answer_format=A2, pattern_filter=False):
    """The hypothesis in a raw output, or the reason it is rejected (see `Cleaner`)."""
    return Cleaner(answer_format, pattern_filter=pattern_filter).clean(raw, source, finished=finished)


def _unquote(line):
    """(the line without its surrounding quotes, whether a closing quote was found)."""
    closing = QUOTES.get(line[:1])
    if closing is None:
        return line, False
    end = line.rfind(closing, 1)
    return (line[1:end], True) if end > 0 else (line[1:], False)


def comparable(text):
    """Case, punctuation and spacing do not make a paraphrase."""
    return re.sub(r"[\W_]+", "", text.casefold())
