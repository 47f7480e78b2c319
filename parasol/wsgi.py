import os

from django.core.wsgi import get_wsgi_application

from parasol.startup import data_version_or_exit, settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
settings_or_exit()
application = get_wsgi_application()
data_version_or_exit()
