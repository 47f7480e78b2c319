"""The report of each task type: one module per task family here (one per package of `annotation/tasktypes/`).

A task type names its report in its own registration (`TaskType.report_section`, the dotted path of
a `base.TaskSection`, imported on first use): one registry, `annotation.tasktypes.registry`.
`reports.sections` asks the type's report which sections a campaign's report shows and which tables
its type adds; it never branches on a type's name.
"""

from functools import cache
from importlib import import_module

from annotation.tasktypes.registry import UnknownTaskType, get_task_type, task_type_names, task_type_of


class NoTaskSection(LookupError):
    """A task type names no report section, or one that does not exist."""


@cache
def task_section(name):
    """The report of task type `name`; `NoTaskSection` says what is missing."""
    try:
        dotted = getattr(get_task_type(name), "report_section", None)
    except UnknownTaskType:
        known = ", ".join(task_type_names())
        raise NoTaskSection(f"no report section for task type {name!r}; task types with one: {known}") from None
    if not dotted:
        raise NoTaskSection(f"task type {name!r} names no report section (its `report_section`)")
    module_name, _, attribute = dotted.rpartition(".")
    try:
        return getattr(import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise NoTaskSection(f"task type {name!r}: its report section {dotted!r} cannot be imported ({error})") from None


def task_section_of(campaigns):
    """The report of the campaigns' task type (campaigns compared in one report share it)."""
    return task_section(task_type_of(campaigns[0]).name)


def task_sections():
    """Every registered task type's report."""
    return [task_section(name) for name in task_type_names()]
