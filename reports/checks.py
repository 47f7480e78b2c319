"""System checks of the reports app: the data version's triggers are all there (`reports.data_version`)."""

from django.core import checks
from django.db import DatabaseError, connections


def data_version_triggers_check(app_configs=None, databases=None, **kwargs):
    """`check --deploy` (and `check --database default`): a missing trigger is an error naming it."""
    errors = []
    for alias in databases or ["default"]:
        try:
            from .data_version import problem

            found = problem(connections[alias])
        except DatabaseError as error:
            errors.append(checks.Error(f"cannot read the database {alias!r}: {error}", id="reports.E002"))
            continue
        if found:
            errors.append(checks.Error(f"Database {alias!r}: {found}", id="reports.E001"))
    return errors
