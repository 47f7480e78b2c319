from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from campaigns.models import Campaign
from tests.browser import browser, page  # noqa: F401 (Playwright fixtures for the browser tests)
from tests.toys import TOY_TASK_TYPE, toy_metric, toy_task_type  # noqa: F401 (the toys' fixtures)

# The SQLite test database is a file under var/ (see settings); make sure its folder exists.
Path(__file__).resolve().parent.parent.joinpath("var").mkdir(exist_ok=True)


@pytest.fixture
def researcher(db):
    return get_user_model().objects.create_user("researcher", password="pw-researcher-123", is_staff=True)


@pytest.fixture
def outsider(db):
    """A logged-in user who is not a researcher."""
    return get_user_model().objects.create_user("outsider", password="pw-outsider-123")


@pytest.fixture
def campaign(db, researcher):
    return Campaign.objects.create(slug="demo", name="Demo", created_by=researcher)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def no_background_scoring(settings):
    """Unit tests score explicitly; the integration tests turn this back on with a real worker."""
    settings.PARASOL_SCORE_ON_CREATE = False


@pytest.fixture(autouse=True)
def fresh_cache(settings):
    """Each test gets an empty in-memory cache: cached reports never leak between tests or runs."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def shared_cache(settings, tmp_path):
    """A cache folder this process (tests, live server) and a real worker both read (a report reaches the page)."""
    folder = tmp_path / "cache"
    settings.CACHES = {
        "default": {"BACKEND": "diskcache.DjangoCache", "LOCATION": str(folder)}  # as in production
    }
    return folder


@pytest.fixture
def task_type(request):
    """The task type a generic test runs for (`@tests.toys.every_task_type`): each registered one, and the toy,
    registered for that test only."""
    if request.param == TOY_TASK_TYPE:
        request.getfixturevalue("toy_task_type")
    return request.param
