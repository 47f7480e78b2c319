"""The task type seam: the registry, the contract every type keeps, and the similarity type's results."""

import json

import pandas as pd
import pytest
from django.template.loader import get_template
from django.urls import reverse

from annotation import assignment as assign
from annotation.checks import training_files_check
from annotation.controls import controls_per_judge
from annotation.tasktypes.base import AnswerForm, TaskType
from annotation.tasktypes.similarity.scale import ANSWERS
from annotation.tasktypes.similarity.tasktype import Similarity
from campaigns.models import TRAINING_TRIAL_SIZE, load_default_training_rows
from campaigns.task_types import UnknownTaskType, get_task_type, task_type_names, task_type_of
from tests.factories import add_pairs, make_judge, remember, without_controls
from tests.toys import every_task_type


def test_a_campaign_is_a_similarity_campaign_by_default(campaign):
    assert campaign.task_type == "similarity"
    assert isinstance(task_type_of(campaign), Similarity)


def test_an_unknown_task_type_is_refused_naming_the_known_ones():
    with pytest.raises(UnknownTaskType, match="'ranking'.*known task types: similarity"):
        get_task_type("ranking")


@every_task_type
def test_every_task_type_keeps_the_contract(task_type):
    name = task_type
    task_type = get_task_type(name)
    assert task_type.name == name
    assert issubclass(task_type.answer_form, AnswerForm)
    for hook in ("answer", "aggregate"):
        assert getattr(type(task_type), hook) is not getattr(TaskType, hook), f"{name} lacks {hook}"
    get_template(task_type.judge_template)
    get_template(task_type.guidelines_template)
    assert set(task_type.control_kinds) <= {"identical", "unrelated"}
    assert len(load_default_training_rows(name)) == TRAINING_TRIAL_SIZE, "the type's own training trial"
    others = [get_task_type(other) for other in task_type_names() if other != name]
    assert str(task_type.title) not in {str(other.title) for other in others}, "pages name a type by its title"


def test_a_task_type_without_its_training_trial_fails_the_system_checks_naming_it(toy_task_type, tmp_path):
    assert training_files_check() == []
    Fluency = type(get_task_type(toy_task_type))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Fluency, "training_file", tmp_path / "missing.jsonl")
        errors = training_files_check()
    assert [error.id for error in errors] == ["annotation.E001"]
    assert "'toy-fluency'" in errors[0].msg and "missing.jsonl" in errors[0].msg


@every_task_type
def test_every_task_types_example_answer_is_valid_and_stored_as_a_json_object(task_type):
    """`example_answer` is what the generic tests post: the form takes it, and its answer is a JSON object (what
    `Judgment.values` holds, whatever the type) holding the answer its `vote` reads."""
    checker = get_task_type(task_type)
    form = checker.answer_form({"assignment": "1", **checker.example_answer()})
    assert form.is_valid(), form.errors
    stored = checker.answer(form.cleaned_data)
    assert isinstance(stored, dict) and stored and json.loads(json.dumps(stored)) == stored
    if checker.vote is not None:
        voting = checker.answer_form({"assignment": "1", **checker.example_answer(1)})
        assert voting.is_valid(), voting.errors
        assert checker.vote.vote_of(checker.answer(voting.cleaned_data)) == 1


def frame(rows):
    return pd.DataFrame([(pair_pk, {"answer": answer}) for pair_pk, answer in rows], columns=["pair_pk", "values"])


@pytest.mark.parametrize(
    ("answers", "majority_label", "paraphrase"),
    [
        (["same_meaning", "same_meaning", "very_different"], "same_meaning", 1),
        (["mostly_similar", "same_meaning", "slightly_similar"], None, 1),
        (["very_different", "same_meaning"], None, pd.NA),
        (["dont_know", "dont_know", "same_meaning"], "dont_know", 1),
        (["dont_know"], "dont_know", pd.NA),
        ([], None, pd.NA),
    ],
)
def test_similarity_aggregates_answers_to_the_pair(answers, majority_label, paraphrase):
    result = Similarity().aggregate(frame([(7, answer) for answer in answers]), [7])
    row = {column: result[column].iloc[0] for column in result.columns}
    assert list(result.columns) == Similarity.pair_columns
    assert row["n_judgments"] == len(answers)
    assert [row[f"n_{answer}"] for answer in ANSWERS] == [answers.count(answer) for answer in ANSWERS]
    assert row["majority_label"] == majority_label if majority_label else pd.isna(row["majority_label"])
    assert row["paraphrase"] is pd.NA if paraphrase is pd.NA else row["paraphrase"] == paraphrase


def test_similarity_keeps_the_pairs_order_and_pairs_nobody_judged():
    result = Similarity().aggregate(frame([(2, "same_meaning"), (9, "very_different")]), [9, 5, 2])
    assert list(result.index) == [9, 5, 2]
    assert list(result["n_judgments"]) == [1, 0, 1]
    assert list(result["paraphrase"].astype(object).fillna(-1)) == [0, -1, 1]


def test_the_answer_is_stored_the_way_the_task_type_says(campaign):
    add_pairs(campaign, 1)
    current = assign.next_assignment(make_judge(campaign))
    judgment, created = assign.record_judgment(current, {"answer": "mostly_similar"})
    assert created and judgment.values == {"answer": "mostly_similar"} and judgment.paraphrase == 1


def test_the_judge_page_shows_the_task_types_answers(client, campaign):
    add_pairs(without_controls(campaign), 1)
    judge = remember(client, make_judge(campaign))
    page = client.get(reverse("annotation-show-item", args=[campaign.slug, judge.token])).content.decode()
    assert page.count('<button type="submit" name="answer"') == len(ANSWERS)
    assert 'name="answer" value="dont_know"' in page


@pytest.mark.parametrize(
    ("name", "has_controls"), [("similarity", True), ("spans", False), ("similarity+spans", True), ("criteria", True)]
)
def test_a_type_without_control_kinds_gets_no_hidden_controls(campaign, name, has_controls):
    campaign.task_type = name
    campaign.save()
    assert (controls_per_judge(campaign) > 0) is has_controls
