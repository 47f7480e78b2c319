"""The contract of a task type: the five things the rest of Parasol asks of it.

A subclass sets the class attributes and implements the hooks; nothing outside
its module knows its answers. See README.md beside this file.
"""

import re
from dataclasses import dataclass

import pandas as pd
from django import forms

from annotation.models import ControlKind


@dataclass(frozen=True)
class ReportSection:
    """What the reports app renders for campaigns of this type: a template fed the campaign's report."""

    name: str
    title: str
    template: str


# A whole number as a browser sends one: ASCII digits only. Python's int() also reads
# Arabic-Indic and other Unicode digits, underscores and signs, none of which a page sends.
ASCII_WHOLE_NUMBER = re.compile(r"[0-9]{1,18}")


def ascii_whole_number(value) -> int:
    """`value` (a form string, or an int from code) as an int, or ValueError unless it is ASCII digits alone."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if not isinstance(value, str) or not ASCII_WHOLE_NUMBER.fullmatch(value):
        raise ValueError(f"not a whole number in ASCII digits: {value!r}")
    return int(value)


class WholeNumberField(forms.IntegerField):
    """An IntegerField that takes ASCII digits only (no Unicode digits, signs, underscores or spaces)."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        try:
            return ascii_whole_number(value)
        except ValueError:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None


class AnswerForm(forms.Form):
    """The fields every answer carries; a task type's form adds its own."""

    assignment = WholeNumberField(min_value=1)
    # Measured in the browser from display to click; absent without JavaScript.
    response_ms = WholeNumberField(required=False, min_value=0)


class TaskType:
    name: str
    title: str
    # The answer controls, included in the judge's item partial (inside its form).
    judge_template: str
    answer_form: type[AnswerForm]
    # Shown (HTTP 400) when a submitted answer does not validate.
    invalid_answer_message: str
    # The `Judgment` fields an answer is stored in (what readers select and pass to `aggregate`).
    stored_fields: tuple[str, ...]
    # The columns `aggregate` returns, in order (the pairs export shows them after the pair).
    pair_columns: list[str]
    report_section: ReportSection
    # For adaptive overlap: the answers (values of the first stored field) voting for each side of a
    # binary outcome, `{1: [...], 0: [...]}`; None when the type has no such outcome (fixed overlap then).
    binary_votes: dict[int, list] | None = None
    # What the welcome page says the judge will do.
    introduction: str
    # A median answer time (seconds per pair) to estimate a campaign's length with until
    # enough answers of this type are stored to measure it (`annotation.stats.answer_seconds`).
    default_answer_seconds: int
    # Whether the questions name a sentence's role (the paraphrase, the original): the source
    # is then always shown first and each sentence is labelled; otherwise the order is random.
    source_first = False
    # The guidelines' explanation and worked examples (on the guidelines page and above every pair).
    guidelines_template = "annotation/_guidelines_content.html"
    # The kinds of hidden control Parasol builds (annotation.controls): the source as its own
    # hypothesis and another pair's hypothesis.
    control_kinds = (ControlKind.IDENTICAL, ControlKind.UNRELATED)

    def guideline_examples(self) -> list:
        """The worked examples `guidelines_template` shows."""
        from annotation.guidelines import guideline_examples

        return guideline_examples()

    def control_passed(self, answer, values, expected) -> bool:
        """Whether an answer (the stored `Answer` and `values`) to a control item matches its expected class."""
        from annotation.controls import passed

        return answer is not None and answer != "" and passed(answer, expected)

    # Whether the item shows the two sentences above the answer controls (a type whose
    # controls are the words themselves shows them once, in its own partial).
    shows_pair = True
    # Hidden control items check the 5-way answer: a type without it shows none.
    uses_controls = True

    def judge_context(self, assignment) -> dict:
        """Extra context for `judge_template` when showing this assignment."""
        return {}

    def answer(self, cleaned_data):
        """The judge's answer, taken from a valid `answer_form`'s cleaned data."""
        raise NotImplementedError

    def answer_problem(self, answer, assignment) -> str | None:
        """Why a valid-looking answer cannot apply to this assignment's pair (a 400), or None."""
        return None

    def feedback(self, judgment) -> dict | None:
        """Context for `annotation/_feedback.html` after a training answer, or None to move straight on.

        `feedback_rows`: one {question, expected, yours, matches} per part of the answer;
        `feedback_sides`: a tagging beside its reference; `explanation`: the pair's why.
        """
        return None

    def dashboard(self, judgments) -> list[dict]:
        """The researcher dashboard's tables of this type's answers: [{"title": ..., "rows": [(label, value)]}].

        `judgments` is the campaign's counted judgments (a queryset).
        """
        return []

    def training_problem(self, metadata) -> str | None:
        """What is wrong with a training pair's expected answer (`metadata["expected"]`), or None."""
        return None

    def judgment_fields(self, answer) -> dict:
        """How an answer is stored: the `Judgment` fields to create with it."""
        raise NotImplementedError

    def aggregate(self, judgments: pd.DataFrame, pair_pks) -> pd.DataFrame:
        """The pair-level results: `pair_columns`, one row per pair of `pair_pks` (the index, in order).

        `judgments` holds the counted judgments: `pair_pk` (the pair's key) and the `stored_fields`.
        """
        raise NotImplementedError
