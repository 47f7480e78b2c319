"""The contract of a task type: everything the rest of Parasol asks of one, attribute by attribute.

A task type is one package here (`<name>/tasktype.py` holds its `TaskType` subclass)
registered by one entry of the `TASK_TYPES` setting (looked up by `campaigns.task_types`);
the type names its report (`report_section`, a dotted path into `reports.task_sections`)
and declares how its answers count as human labels (`vote`). A subclass must set the
attributes without a default and implement `answer` and `aggregate`; everything
else has a default that suits a type without it. Every type's answer is stored the
same way, as a JSON object in `Judgment.values`. Nothing outside its package knows
its answers. See README.md beside this file.
"""

import re
from pathlib import Path

import pandas as pd
from django import forms
from django.conf import settings

from annotation.training import EXPECTED
from annotation.votes import Vote

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
    """A task type; the groups below are what each part of Parasol reads."""

    # --- Identity and welcome (the registry, the campaign forms, `annotation.joining`) ---
    # The registry key, stored in `Campaign.task_type`.
    name: str
    # The display name in the campaign forms and the report's protocol appendix.
    title: str
    # What the welcome page says the judge will do.
    introduction: str
    # A median answer time (seconds per pair) to estimate a campaign's length with until
    # enough answers of this type are stored to measure it (`annotation.stats.answer_seconds`).
    default_answer_seconds: int

    # --- The judge page (`annotation.views`, `annotation/_item.html`) ---
    # The answer controls, included in the judge's item partial (inside its form); `judge_context` feeds it.
    judge_template: str
    # Whether the item shows the two sentences above the answer controls (a type whose
    # controls are the words themselves shows them once, in its own partial).
    shows_pair = True
    # Whether the questions name a sentence's role (the paraphrase, the original): the source
    # is then always shown first and each sentence is labelled; otherwise the order is random.
    source_first = False

    # --- The form (`annotation.views.answer`) ---
    # A subclass of `AnswerForm` (which carries `assignment` and `response_ms`) with the answer's fields.
    answer_form: type[AnswerForm]
    # Shown (HTTP 400) when a submitted answer does not validate.
    invalid_answer_message: str

    # --- Aggregation to the pair (the pairs export) ---
    # The columns `aggregate` returns, in order (the pairs export shows them after the pair); the first
    # counts the pair's judgments (`n_judgments`, or what the type calls them: `n_taggings`).
    pair_columns: list[str]
    # --- Human labels (the report's labels and estimates, adaptive overlap, controls, active choice) ---
    # How an answer votes on "is this a paraphrase?" and ranks on a rating (`annotation.votes.Vote`:
    # its key in `Judgment.values`, each answer's vote, the answers that abstain, each answer's rating). The
    # report's human labels (Table 3, the estimates, the systems' rates), adaptive overlap and the
    # hidden controls read it. None: the type's answers give no paraphrase label (the report then
    # reads the gold labels, and the overlap stays fixed).
    vote: Vote | None = None

    # --- The report (`reports.task_sections.task_section`) ---
    # The dotted path of the type's `reports.task_sections.base.TaskSection` (a string: `annotation`
    # sits below `reports` and never imports it), imported on first use.
    report_section: str

    # --- Guidelines (the guidelines page and the panel above every pair) ---
    # The explanation and worked examples; the template gets `guideline_examples()` as `examples`.
    # The default says what the welcome page says (`introduction`), and, where there are keys (a
    # `key-hint`), that the keys shown on the answers answer too.
    guidelines_template = "annotation/_guidelines_content.html"

    # --- The campaign page (`annotation.researcher_views.show_campaign`) ---
    # Whether the answers include a word tagging of each sentence (`annotation.tagging`): the
    # campaign page then offers the taggings export and the span detector trained on them.
    tags_words = False

    # --- Hidden controls (`annotation.controls`, `annotation.reliability`) ---
    # The kinds of hidden control Parasol builds from the campaign's sentences: "identical" (the
    # source as its own hypothesis) and "unrelated" (another pair's hypothesis). Empty: the type's
    # judges get no hidden control at all (neither built nor uploaded ones).
    control_kinds: tuple[str, ...] = ()

    # --- Training (`campaigns.models.load_default_training_rows`, via `annotation.apps`) ---
    @property
    def training_file(self) -> Path:
        """The default training trial: JSON Lines, one pair per line (`source`, `hypothesis`, and the
        `expected` and `explanation` that `feedback` reads, if the type gives feedback). At least five lines.
        """
        return Path(settings.BASE_DIR) / "fixtures" / f"training_pairs_{self.name}.jsonl"

    def highlights(self, campaign) -> bool:
        """Whether the judge sees the yellow highlight (`annotation.diff`) on this campaign's pairs and feedback."""
        return True

    def guideline_examples(self) -> list:
        """The worked examples `guidelines_template` shows."""
        return []

    def control_passed(self, values, expected) -> bool:
        """Whether an answer (the stored `Judgment.values`) to a control item matches its expected class.

        The default: the answer's vote (`vote`) is the expected class; a type without a vote passes none.
        A type whose controls expect something else (PEM's fixed ratings) says how its answers pass.
        """
        vote = self.vote.vote_of(values) if self.vote is not None else None
        return vote is not None and vote == expected

    def judge_context(self, assignment) -> dict:
        """Extra context for `judge_template` when showing this assignment."""
        return {}

    def example_answer(self, paraphrase: int | None = None) -> dict:
        """The form data of one valid answer to any pair, as the judge page posts it (the generic tests send it).

        Each key names a control of `judge_template` and each value is a control's `value` (the walk in
        Chromium clicks `[name=key][value=value]`). The default takes the first choice of every required
        choice field of `answer_form`; a type with another kind of required field must override it.
        `paraphrase` (1 or 0, for a type with a `vote`): an answer voting so instead, in the form field
        named like the answer's key (`vote.key`), which a type whose form names it otherwise must override.
        """
        data = {}
        for name, field in self.answer_form.base_fields.items():
            if name in AnswerForm.base_fields or not field.required:
                continue
            choices = [value for value, _text in getattr(field, "choices", ()) if value != ""]
            if not choices:
                raise NotImplementedError(f"{type(self).__name__}.example_answer: give a valid value for {name!r}")
            data[name] = str(choices[0])
        if paraphrase is not None and self.vote is not None:
            data[self.vote.key] = str(self.vote.answers_voting(paraphrase)[0])
        return data

    def answer(self, cleaned_data) -> dict:
        """The judge's answer, taken from a valid `answer_form`'s cleaned data, as it is stored: the JSON object
        of `Judgment.values` (JSON types only; the key of a `vote`'s answer is `vote.key`)."""
        raise NotImplementedError

    def answer_problem(self, answer, assignment) -> str | None:
        """Why a valid-looking answer cannot apply to this assignment's pair (a 400), or None."""
        return None

    def aggregate(self, judgments: pd.DataFrame, pair_pks) -> pd.DataFrame:
        """The pair-level results: `pair_columns`, one row per pair of `pair_pks` (the index, in order).

        `judgments` holds the counted judgments: `pair_pk` (the pair's key) and `values` (each one's answer).
        """
        raise NotImplementedError

    def feedback(self, judgment) -> dict | None:
        """Context for `annotation/_feedback.html` after a training answer, or None to move straight on.

        `feedback_rows`: one {question, expected, yours, matches} per part of the answer;
        `feedback_sides`: a tagging beside its reference; `explanation`: the pair's why.
        """
        return None

    def parse_expected(self, value):
        """A training pair's expected answer (`metadata["expected"]`) in this type's form; ValueError names a bad one.

        The default takes any value as it is: a type without feedback has no form to check it against.
        """
        return value

    def training_problem(self, metadata) -> str | None:
        """What is wrong with a training pair's expected answer (`metadata["expected"]`), or None."""
        if not metadata.get(EXPECTED):
            return None
        try:
            self.parse_expected(metadata[EXPECTED])
        except ValueError as error:
            return str(error)
        return None

    def protocol(self) -> list[tuple[str, str]]:
        """What a reader needs to repeat this type's judging: (what, how) rows of the report's protocol appendix
        (its answers, how they become a pair's result). The default says nothing beyond the type's title."""
        return []

    def dashboard(self, judgments) -> list[dict]:
        """The researcher dashboard's tables of this type's answers: [{"title": ..., "rows": [(label, value)]}].

        `judgments` is the campaign's counted judgments (a queryset).
        """
        return []
