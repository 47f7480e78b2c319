"""Task type names mapped to dotted paths, imported on first use.

`Campaign.task_type` stores one of these names; `campaigns` sits below
`annotation` and cannot import it, so the names are checked here.
"""

from functools import cache
from importlib import import_module

TASK_TYPES = {
    "similarity": "annotation.tasktypes.similarity.tasktype.Similarity",
    "criteria": "annotation.tasktypes.criteria.tasktype.Criteria",
    "spans": "annotation.tasktypes.spans.tasktype.Spans",
    "similarity+spans": "annotation.tasktypes.spans.tasktype.SimilaritySpans",
}
DEFAULT_TASK_TYPE = "similarity"


class UnknownTaskType(ValueError):
    """A campaign names a task type this installation does not have."""


def task_type_names():
    return list(TASK_TYPES)


@cache
def get_task_type(name):
    """The task type registered under `name` (one instance per process); `UnknownTaskType` names the known ones."""
    try:
        dotted = TASK_TYPES[name]
    except KeyError:
        raise UnknownTaskType(f"unknown task type {name!r}; known task types: {', '.join(TASK_TYPES)}") from None
    module_name, _, class_name = dotted.rpartition(".")
    return getattr(import_module(module_name), class_name)()


def task_type_of(campaign):
    """The task type a campaign's judges answer."""
    return get_task_type(campaign.task_type)
