"""The 5-way similarity protocol (Parasol's first task type): how close are the two meanings?

The judge picks one of five answers (Very different … Same meaning, or Don't
know); it is stored in `Judgment.values["answer"]`. A pair's result is the count of each
answer, the unique most frequent answer, and the binary paraphrase label by
majority. The answers and their binary and ordinal mappings are the scale's
facts (`scale`, beside this module), declared as the type's `vote`.
"""

import pandas as pd
from django import forms
from django.db.models import Count
from django.db.models.fields.json import KT
from django.utils.translation import gettext_lazy as _

from annotation.models import Answer, ControlKind
from annotation.training import EXPECTED, explanation_of
from annotation.votes import NON_PARAPHRASE, PARAPHRASE, PARAPHRASE_TITLES, majority_paraphrase

from ..base import AnswerForm, TaskType
from . import guidelines
from .scale import ANSWER_KEY, ANSWER_TITLES, ANSWERS, PARAPHRASE_OF_ANSWER, VOTE

COUNT_COLUMN_OF_ANSWER = {answer: f"n_{answer}" for answer in ANSWERS}


class SimilarityAnswerForm(AnswerForm):
    answer = forms.ChoiceField(choices=Answer.choices)  # named like its key in `Judgment.values` (`ANSWER_KEY`)


class Similarity(TaskType):
    name = "similarity"
    title = _("Similarity (5-way)")
    judge_template = "annotation/tasktypes/_similarity.html"
    guidelines_template = "annotation/tasktypes/_similarity_guidelines.html"
    introduction = _(
        "Thank you for helping! You will read pairs of English sentences and tell us how close their meanings are, "
        "choosing one of five answers."
    )
    # One click per pair: a guess (no stored answers measured it yet), replaced by the
    # measured median once answers are stored.
    default_answer_seconds = 10
    answer_form = SimilarityAnswerForm
    invalid_answer_message = _("Choose one of the five answers.")
    # `majority_label` holds the majority 5-way answer: the pairs export's published name, kept.
    pair_columns = ["n_judgments", *COUNT_COLUMN_OF_ANSWER.values(), "majority_label", "paraphrase"]
    # Both kinds of hidden control: the 5-way answer can pass or fail either.
    control_kinds = (ControlKind.IDENTICAL, ControlKind.UNRELATED)
    # The scale's binary mapping (Don't know votes neither way) and its 4-point ordinal.
    vote = VOTE
    report_section = "reports.task_sections.similarity.SIMILARITY_REPORT"

    def judge_context(self, assignment):
        return {"answers": Answer.choices}

    def guideline_examples(self):
        return guidelines.guideline_examples()

    def answer(self, cleaned_data):
        return {ANSWER_KEY: cleaned_data["answer"]}

    def protocol(self):
        # In English, as the report is written: the scale's titles, not the judge's translated labels.
        binary = {1: PARAPHRASE_TITLES[PARAPHRASE], 0: PARAPHRASE_TITLES[NON_PARAPHRASE]}
        answers = ", ".join(f"{ANSWER_TITLES[a]} ({binary.get(PARAPHRASE_OF_ANSWER[a], 'no vote')})" for a in ANSWERS)
        return [
            ("Answers and their binary label", answers),
            ("Pair label", "majority of the binary votes; Don't know casts no vote; a tie leaves the pair unlabelled"),
        ]

    def dashboard(self, judgments):
        answers = judgments.annotate(answer=KT(VOTE.lookup)).values_list("answer").annotate(n=Count("pk"))
        by_answer = dict(answers.order_by())
        return [{"title": _("Answers"), "rows": [(answer.label, by_answer.get(answer.value, 0)) for answer in Answer]}]

    def feedback(self, judgment):
        """The expected answer(s) beside the judge's, and the pair's why."""
        row = answer_feedback_row(judgment)
        explanation = explanation_of(judgment.pair)
        if row is None and not explanation:
            return None
        return {"feedback_rows": [row] if row else [], "explanation": explanation}

    def parse_expected(self, value):
        return parse_expected_answers(value)

    def aggregate(self, judgments, pair_pks):
        """Per pair: `n_judgments`, one `n_<answer>` count per answer, `majority_label` and `paraphrase`.

        `majority_label` (the pairs export's name) is the answer (Don't know included) given most often; a tie
        for the top, or no judgment, leaves it empty. `paraphrase` is the binary
        majority of the answers' votes (Don't know casts no vote; a tie stays empty).
        """
        counts = answer_counts(judgments).reindex(pd.Index(pair_pks), fill_value=0)
        frame = pd.DataFrame(index=counts.index)
        frame["n_judgments"] = counts.sum(axis=1)
        for answer, column in COUNT_COLUMN_OF_ANSWER.items():
            frame[column] = counts[answer]
        frame["majority_label"] = _majority_answer(counts)
        votes = {value: counts[VOTE.answers_voting(value)].sum(axis=1) for value in (0, 1)}
        frame["paraphrase"] = majority_paraphrase(votes[1], votes[0])
        return frame


def parse_expected_answers(value) -> list[str]:
    """5-way answer names, as a list or as text separated by "|" or ","; ValueError names a bad one."""
    if isinstance(value, str):
        value = [part for chunk in value.split("|") for part in chunk.split(",")]
    if not isinstance(value, list) or not value:
        raise ValueError("expected must name one or more answers, e.g. mostly_similar|same_meaning")
    answers = [str(item).strip() for item in value if str(item).strip()]
    unknown = [answer for answer in answers if answer not in ANSWERS]
    if unknown or not answers:
        shown = unknown[0] if unknown else ""
        raise ValueError(f"expected names an unknown answer {shown!r}; answers: {', '.join(ANSWERS)}")
    return [answer for answer in ANSWERS if answer in answers]


def expected_answers(pair) -> list[str]:
    """The 5-way answers a training pair accepts: its `expected`, else those voting for its gold label."""
    value = pair.metadata.get(EXPECTED)
    if value:
        return parse_expected_answers(value)
    if pair.gold_label is None:
        return []
    return [answer for answer, vote in PARAPHRASE_OF_ANSWER.items() if vote == pair.gold_label]


def answer_feedback_row(judgment):
    """The 5-way part of a training answer's feedback, or None when the pair expects no answer."""
    expected = expected_answers(judgment.pair)
    if not expected:
        return None
    yours = VOTE.answer_of(judgment.values)
    return {
        "question": _("How close are the meanings?"),
        "expected": _(" or ").join(str(Answer(answer).label) for answer in expected),
        "yours": Answer(yours).label if yours in ANSWERS else "",
        "matches": yours in expected,
    }


def answer_counts(judgments: pd.DataFrame) -> pd.DataFrame:
    """Judgments per pair (index `pair_pk`) and answer (one int column per answer, in the protocol's order)."""
    answers = pd.Series(VOTE.answers(judgments["values"]), index=judgments.index, dtype=object)
    counts = pd.crosstab(judgments["pair_pk"], answers) if len(judgments) else pd.DataFrame()
    return counts.reindex(columns=ANSWERS, fill_value=0).astype("int64")


def _majority_answer(counts: pd.DataFrame) -> pd.Series:
    top = counts.max(axis=1)
    unique_top = (counts.eq(top, axis=0).sum(axis=1) == 1) & (top > 0)
    return counts.idxmax(axis=1).where(unique_top, None).astype(object)
