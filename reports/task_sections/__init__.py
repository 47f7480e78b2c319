"""The report of each task type: one module per task family here (one per package of `annotation/tasktypes/`).

A task type names its report in its own registration (`TaskType.report_section`, the dotted path of
a `base.TaskSection`, imported on first use): one registration, the `TASK_TYPES` setting, looked up by
`campaigns.task_types`.
`reports.sections` asks the type's report which sections a campaign's report shows and which tables
its type adds; it never branches on a type's name.
"""

from django.utils.module_loading import import_string

from campaigns.task_types import UnknownTaskType, get_task_type, task_type_names, task_type_of


class NoTaskSection(LookupError):
    """A task type names no report section, or one that does not exist."""


def task_section(name):
    """The report of task type `name`; `NoTaskSection` says what is missing."""
    try:
        dotted = getattr(get_task_type(name), "report_section", None)
    except UnknownTaskType:
        known = ", ".join(task_type_names())
        raise NoTaskSection(f"no report section for task type {name!r}; task types with one: {known}") from None
    if not dotted:
        raise NoTaskSection(f"task type {name!r} names no report section (its `report_section`)")
    # Not cached by name: the registry may change (a test's toy); Python keeps each imported module.
    try:
        return import_string(dotted)
    except ImportError as error:
        raise NoTaskSection(f"task type {name!r}: its report section {dotted!r} cannot be imported ({error})") from None


def task_section_of(campaigns):
    """The report of the campaigns' task type (campaigns compared in one report share it)."""
    return task_section(task_type_of(campaigns[0]).name)


def task_sections():
    """Every registered task type's report."""
    return [task_section(name) for name in task_type_names()]
