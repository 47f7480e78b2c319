"""The report of each task type, registered under the task type's name (`annotation.tasktypes.registry`).

Task type names map to the dotted path of a `base.TaskSection`, imported on first use: one
module per task family here (one per package of `annotation/tasktypes/`). `reports.sections` asks
the registry which sections a campaign's report shows and which tables its type adds;
it never branches on a type's name.
"""

from functools import cache
from importlib import import_module

from annotation.tasktypes.registry import task_type_of

TASK_SECTIONS = {
    "similarity": "reports.task_sections.similarity.SIMILARITY_REPORT",
    "criteria": "reports.task_sections.criteria.CRITERIA_REPORT",
    "spans": "reports.task_sections.spans.SPANS_REPORT",
    "similarity+spans": "reports.task_sections.spans.SIMILARITY_SPANS_REPORT",
}


class NoTaskSection(LookupError):
    """A task type has no report section registered here."""


@cache
def task_section(name):
    """The report of task type `name`; `NoTaskSection` names the types that have one."""
    try:
        dotted = TASK_SECTIONS[name]
    except KeyError:
        known = ", ".join(TASK_SECTIONS)
        raise NoTaskSection(f"no report section for task type {name!r}; task types with one: {known}") from None
    module_name, _, attribute = dotted.rpartition(".")
    return getattr(import_module(module_name), attribute)


def task_section_of(campaigns):
    """The report of the campaigns' task type (campaigns compared in one report share it)."""
    return task_section(task_type_of(campaigns[0]).name)


def task_sections():
    """Every registered task type's report."""
    return [task_section(name) for name in TASK_SECTIONS]
