"""Test settings: the development defaults (DEBUG on, the development key), then Parasol's settings.

Production is DEBUG off with a strong key; tests that need it run the app in a
child process with that environment (tests/test_settings.py, tests/system/).
Child processes the tests start (workers, servers) inherit these variables.
"""

import os

os.environ.setdefault("DJANGO_DEBUG", "true")
# No test reaches a Redis it did not start (the system's, or another run's on 6379): port 1 is
# privileged and never handed out by the kernel, so nothing a test starts listens there; tests
# that need Redis start their own (tests/servers.py) and point the Celery app at it.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:1/0")

from parasol.settings import *  # noqa: E402, F403
