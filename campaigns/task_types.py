"""The task types a campaign may use, looked up by name: the one home of the registry's lookup.

A task type is registered by one entry of the `TASK_TYPES` setting (`parasol/settings.py`): its name
mapped to the dotted path of its class, imported on first use as Django imports the dotted paths of its
own settings; `DEFAULT_TASK_TYPE` names the type a new campaign takes. The types live in
`annotation/tasktypes/`, a layer above: `campaigns` stores a type's name (`Campaign.task_type`) and reads
the rest here by that path, so it never imports `annotation`, and no app fills anything in at start-up.
"""

from functools import cache

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string


class UnknownTaskType(ValueError):
    """A campaign names a task type this installation does not have."""


def task_type_names():
    """The registered types' names, in the setting's order."""
    return list(settings.TASK_TYPES)


def default_task_type():
    """The type a new campaign takes (`Campaign.task_type`'s default)."""
    return settings.DEFAULT_TASK_TYPE


def get_task_type(name):
    """The task type registered under `name` (one instance per class and process); `UnknownTaskType` names the
    known ones."""
    try:
        dotted = settings.TASK_TYPES[name]
    except KeyError:
        known = ", ".join(task_type_names())
        raise UnknownTaskType(f"unknown task type {name!r}; known task types: {known}") from None
    return _instance(dotted)


@cache
def _instance(dotted):
    # Cached by the class's path, not the type's name: a test that registers a type for a while (the
    # toys, `override_settings`) leaves nothing stale behind, and there is no cache to clear.
    return import_string(dotted)()


def task_type_of(campaign):
    """The task type a campaign's judges answer."""
    return get_task_type(campaign.task_type)


def choices():
    """(name, title) of every registered type: `Campaign.task_type`'s choices, read when asked (a callable)."""
    return [(name, get_task_type(name).title) for name in task_type_names()]


def task_types_check(app_configs=None, **kwargs):
    """The registration holds (`manage.py check`, and every command that runs the checks): the default is a
    registered type, and each entry's path imports a class of that name."""
    errors = []
    if default_task_type() not in settings.TASK_TYPES:
        errors.append(
            checks.Error(
                f"DEFAULT_TASK_TYPE {default_task_type()!r} is not a registered task type; "
                f"known task types: {', '.join(task_type_names())}",
                hint="Name one of TASK_TYPES' keys, or register the type there.",
                id="campaigns.E001",
            )
        )
    for name, dotted in settings.TASK_TYPES.items():
        try:
            found = get_task_type(name).name
        except ImportError as error:
            problem = f"{dotted!r} cannot be imported ({error})"
        else:
            problem = None if found == name else f"{dotted!r} is the task type named {found!r}"
        if problem:
            errors.append(
                checks.Error(
                    f"task type {name!r} in TASK_TYPES: {problem}",
                    hint="Map each name to the dotted path of the TaskType subclass whose `name` it is.",
                    id="campaigns.E002",
                )
            )
    return errors
