"""Load the settings before anything else runs, so a bad environment is one line, not a traceback.

manage.py, the Celery app and the WSGI application (gunicorn) call `settings_or_exit` first:
a missing or malformed variable then prints what parasol.settings says (the variable and what
to set) and the process exits with `EXIT_CODE`.
"""

import sys

from django.core.exceptions import ImproperlyConfigured

# 3 is also what gunicorn's master reads as "worker failed to boot": it stops instead of respawning.
EXIT_CODE = 3


def refuse_to_start(reason):
    """Stop the process with one line saying why, and `EXIT_CODE`."""
    sys.stderr.write(f"Parasol cannot start: {reason}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_CODE) from None  # the reason is the line above, not a traceback


def settings_or_exit():
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018 -- reading one setting imports the whole module
    except ImproperlyConfigured as error:
        refuse_to_start(error)
