"""The task type registry's lookup (`campaigns.task_types`): one entry of the TASK_TYPES setting registers a type.

`campaigns` reads the registration itself, by dotted path, so nothing fills it in at start-up; the system
check stops start-up on a registration that cannot work, naming what is wrong.
"""

import pytest
from django.test import override_settings

from annotation.checks import training_files_check
from annotation.tasktypes.criteria.tasktype import Criteria
from campaigns import task_types
from campaigns.models import Campaign

SIMILARITY = "annotation.tasktypes.similarity.tasktype.Similarity"


def test_the_registration_passes_the_system_check():
    assert task_types.task_types_check() == []


def test_a_new_campaign_takes_the_default_the_setting_names(db):
    with override_settings(DEFAULT_TASK_TYPE="criteria"):
        assert Campaign.objects.create(slug="rated", name="Rated").task_type == "criteria"
        assert isinstance(task_types.task_type_of(Campaign.objects.get(slug="rated")), Criteria)


def test_the_choices_are_the_registered_types_under_their_titles():
    assert [name for name, _ in task_types.choices()] == task_types.task_type_names()
    assert dict(task_types.choices())["criteria"] == Criteria.title
    assert Campaign(task_type="criteria").get_task_type_display() == Criteria.title


def test_a_default_that_is_not_registered_fails_the_check_naming_the_known_types():
    with override_settings(DEFAULT_TASK_TYPE="ranking"):
        errors = task_types.task_types_check()
    assert [error.id for error in errors] == ["campaigns.E001"]
    assert "'ranking'" in errors[0].msg and "known task types: similarity, criteria" in errors[0].msg


@pytest.mark.parametrize(
    ("dotted", "said"),
    [
        ("annotation.tasktypes.ranking.tasktype.Ranking", "cannot be imported"),
        ("annotation.tasktypes.similarity.tasktype.Ranking", "cannot be imported"),
        (SIMILARITY, "is the task type named 'similarity'"),
    ],
)
def test_an_entry_that_cannot_work_fails_the_check_naming_it(dotted, said):
    with override_settings(TASK_TYPES={"similarity": SIMILARITY, "ranking": dotted}):
        errors = task_types.task_types_check()
        assert training_files_check() == []  # the other checks go on: this one names the entry
    assert [error.id for error in errors] == ["campaigns.E002"]
    assert errors[0].msg.startswith("task type 'ranking' in TASK_TYPES:") and said in errors[0].msg
    assert repr(dotted) in errors[0].msg


def test_an_unknown_name_is_refused_naming_the_known_ones(db):
    with pytest.raises(task_types.UnknownTaskType, match="'ranking'; known task types: similarity, criteria"):
        task_types.get_task_type("ranking")
    problem = Campaign().task_type_problem("ranking")
    assert problem.startswith("unknown task type 'ranking'; known task types: similarity, criteria")
