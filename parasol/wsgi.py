import os

from django.core.wsgi import get_wsgi_application

from parasol.startup import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
settings_or_exit()
application = get_wsgi_application()
# Django's own entry point, like the URLs: it may name the app that owns the check. Not before the app
# registry is ready (get_*_application sets it up).
from reports.data_version import data_version_or_exit  # noqa: E402

data_version_or_exit()
