"""Test settings: the development defaults (DEBUG on, the development key), then Parasol's settings.

Production is DEBUG off with a strong key; tests that need it run the app in a
child process with that environment (tests/test_settings.py, tests/system/).
Child processes the tests start (workers, servers) inherit these variables.
"""

import os

os.environ.setdefault("DJANGO_DEBUG", "true")

from parasol.settings import *  # noqa: E402, F403
