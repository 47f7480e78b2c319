"""PEM's multi-criteria judging: adequacy, fluency, lexical dissimilarity and overall quality, each 1-5.

The judge rates the hypothesis on four criteria (labelled ends, keys 1-5 for the active
criterion, Enter to send); the four ratings are stored in `Judgment.values`, one key
per criterion. A pair's result is each criterion's mean and the count
of every rating. Controls are the source as its own hypothesis (`scale` beside this module).
"""

import json

import pandas as pd
from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.models import ControlKind
from annotation.training import EXPECTED, explanation_of

from ..base import AnswerForm, TaskType
from . import guidelines
from .scale import CRITERIA, RATINGS, control_passed

# Each criterion's title, its question (worded by role: the paraphrase against the original,
# as PEM rates a paraphrase against its source) and the meaning of its two ends (1 and 5).
QUESTIONS = {
    "adequacy": (
        _("Adequacy"),
        _("Adequacy: how much of the original's meaning does the paraphrase keep?"),
        _("none of it"),
        _("all of it"),
    ),
    "fluency": (_("Fluency"), _("Fluency: is the paraphrase fluent English?"), _("incomprehensible"), _("flawless")),
    "dissimilarity": (
        _("Lexical dissimilarity"),
        _("Lexical dissimilarity: how much did the paraphrase change the original's wording?"),
        _("same words"),
        _("entirely new words"),
    ),
    "overall": (
        _("Overall"),
        _("Overall: how good a paraphrase of the original is it?"),
        _("very poor"),
        _("excellent"),
    ),
}
RATING_CHOICES = [(rating, str(rating)) for rating in RATINGS]


class CriteriaAnswerForm(AnswerForm):
    adequacy = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int)
    fluency = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int)
    dissimilarity = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int)
    overall = forms.TypedChoiceField(choices=RATING_CHOICES, coerce=int)


def rating_columns():
    """The pairs CSV's columns: judgments, then per criterion its mean and one count per rating."""
    columns = ["n_judgments"]
    for criterion in CRITERIA:
        columns += [f"{criterion}_mean", *(f"n_{criterion}_{rating}" for rating in RATINGS)]
    return columns


class Criteria(TaskType):
    name = "criteria"
    title = _("Criteria (PEM: adequacy, fluency, dissimilarity, overall)")
    judge_template = "annotation/tasktypes/_criteria.html"
    guidelines_template = "annotation/tasktypes/_criteria_guidelines.html"
    introduction = _(
        "Thank you for helping! You will read an original English sentence and a paraphrase of it, and rate "
        "the paraphrase on four criteria: how much of the meaning it keeps, how fluent it is, how much its "
        "wording changed, and overall."
    )
    # Four ratings per pair: a guess (no stored answers measured it yet), about three times
    # the 5-way answer's; replaced by the measured median once answers are stored.
    default_answer_seconds = 30
    source_first = True
    answer_form = CriteriaAnswerForm
    invalid_answer_message = _("Rate all four criteria from 1 to 5.")
    pair_columns = rating_columns()
    # PEM's control: the source as its own hypothesis, with fixed expected ratings (`scale`).
    control_kinds = (ControlKind.IDENTICAL,)
    report_section = "reports.task_sections.criteria.CRITERIA_REPORT"

    def judge_context(self, assignment):
        criteria = [
            {"name": name, "question": question, "low": low, "high": high, "ratings": RATINGS}
            for name, (_title, question, low, high) in QUESTIONS.items()
        ]
        return {"criteria": criteria}

    def guideline_examples(self):
        return guidelines.guideline_examples()

    def answer(self, cleaned_data):
        return {criterion: cleaned_data[criterion] for criterion in CRITERIA}

    def protocol(self):
        titles = ", ".join(str(title) for title, *_rest in QUESTIONS.values())
        return [
            ("Ratings", f"{titles}: each from {RATINGS[0]} to {RATINGS[-1]}, the paraphrase against the original"),
            ("Pair result", "each criterion's mean rating"),
        ]

    def dashboard(self, judgments):
        """Per criterion: the mean rating and how many ratings it is over."""
        ratings = pd.DataFrame(list(judgments.values_list("values", flat=True)), columns=CRITERIA)
        rows = []
        for criterion, (title, *_rest) in QUESTIONS.items():
            values = pd.to_numeric(ratings[criterion], errors="coerce").dropna() if len(ratings) else ratings[criterion]
            mean = f"{values.mean():.2f}" if len(values) else "–"
            rows.append((title, f"{mean} (n = {len(values)})"))
        return [{"title": _("Mean rating per criterion"), "rows": rows}]

    def feedback(self, judgment):
        """Per criterion: the expected rating or range beside the judge's, and the pair's why."""
        value = judgment.pair.metadata.get(EXPECTED)
        ranges = parse_expected_ranges(value) if value else {}
        explanation = explanation_of(judgment.pair)
        if not ranges and not explanation:
            return None
        rows = []
        for criterion, (title, *_rest) in QUESTIONS.items():
            rating = judgment.values.get(criterion)
            low, high = ranges.get(criterion, (None, None))
            rows.append(
                {
                    "question": title,
                    "expected": "" if low is None else (str(low) if low == high else f"{low}–{high}"),
                    "yours": rating,
                    "matches": None if low is None or rating is None else low <= int(rating) <= high,
                }
            )
        return {"feedback_rows": rows, "explanation": explanation}

    def parse_expected(self, value):
        return parse_expected_ranges(value)

    def control_passed(self, values, expected):
        # PEM's control: the expected ratings are fixed (`scale`), not the pair's gold label.
        return control_passed(values)

    def aggregate(self, judgments, pair_pks):
        """Per pair: `n_judgments`, and per criterion its mean and the count of each rating (1-5)."""
        ratings = ratings_frame(judgments).assign(pair_pk=judgments["pair_pk"].to_numpy() if len(judgments) else [])
        index = pd.Index(pair_pks)
        frame = pd.DataFrame(index=index)
        frame["n_judgments"] = ratings.groupby("pair_pk").size().reindex(index, fill_value=0).astype("int64")
        for criterion in CRITERIA:
            frame[f"{criterion}_mean"] = ratings.groupby("pair_pk")[criterion].mean().reindex(index)
            counts = pd.crosstab(ratings["pair_pk"], ratings[criterion]) if len(ratings) else pd.DataFrame()
            counts = counts.reindex(index=index, columns=RATINGS, fill_value=0)
            for rating in RATINGS:
                frame[f"n_{criterion}_{rating}"] = counts[rating].astype("int64")
        return frame[self.pair_columns]


def parse_expected_ranges(value) -> dict[str, tuple[int, int]]:
    """Per criterion, the (lowest, highest) rating expected: {"adequacy": [4, 5], "fluency": 5, "overall": "3-4"}.

    A CSV cell holds the same object as JSON text. ValueError names the first problem.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = None
    if not isinstance(value, dict) or not value:
        raise ValueError('expected must be an object of criteria and ratings, e.g. {"adequacy": [4, 5], "fluency": 5}')
    ranges = {}
    for criterion, rating in value.items():
        if criterion not in CRITERIA:
            raise ValueError(f"expected names an unknown criterion {criterion!r}; criteria: {', '.join(CRITERIA)}")
        ranges[criterion] = _rating_range(criterion, rating)
    return {criterion: ranges[criterion] for criterion in CRITERIA if criterion in ranges}


def _rating_range(criterion, rating):
    if isinstance(rating, str) and "-" in rating:
        rating = rating.split("-", 1)
    bounds = rating if isinstance(rating, list) else [rating]
    if any(isinstance(bound, bool | float) for bound in bounds):
        bounds = []
    try:
        numbers = [int(bound) for bound in bounds]
    except (TypeError, ValueError):
        numbers = []
    if len(numbers) not in (1, 2) or any(number not in RATINGS for number in numbers):
        raise ValueError(f"expected {criterion}: give a rating from 1 to 5 or a range such as [4, 5]")
    return min(numbers), max(numbers)


def ratings_frame(judgments: pd.DataFrame) -> pd.DataFrame:
    """One float column per criterion, read from each judgment's `values` (on the judgments' index)."""
    values = judgments["values"] if "values" in judgments else pd.Series([], dtype=object)
    rows = [value if isinstance(value, dict) else {} for value in values]
    ratings = pd.DataFrame(rows, index=judgments.index).reindex(columns=CRITERIA).apply(pd.to_numeric, errors="coerce")
    return ratings.astype(float)
