"""System checks (`manage.py check`, and every management command that runs them) of the registered task types."""

from pathlib import Path

from django.core import checks

from campaigns.task_types import get_task_type, task_type_names


def training_files_check(app_configs=None, **kwargs):
    """Every registered task type has its default training trial: a missing one stops start-up naming it."""
    errors = []
    for name in task_type_names():
        try:
            path = Path(get_task_type(name).training_file)
        except ImportError:
            continue  # campaigns.E002 names the type whose path does not import
        if not path.is_file():
            errors.append(
                checks.Error(
                    f"task type {name!r} has no default training trial: {path} is missing",
                    hint="Add the file (JSON Lines, five pairs or more) or set the type's training_file.",
                    id="annotation.E001",
                )
            )
    return errors
