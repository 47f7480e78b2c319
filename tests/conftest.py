from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import translation

from campaigns.models import Campaign
from tests.browser import browser, page  # noqa: F401 (Playwright fixtures for the browser tests)
from tests.toys import TOY_TASK_TYPE, toy_metric, toy_task_type  # noqa: F401 (the toys' fixtures)

# The SQLite test database is a file under var/ (see settings); make sure its folder exists.
Path(__file__).resolve().parent.parent.joinpath("var").mkdir(exist_ok=True)


# The modules whose tests, unmarked otherwise, took the most time in a whole run (2026-11-28, two processes on the
# two-core machine: `--durations`, docs/development/tests.md): marked `slow` here, in one place, so that
# `make test-fast` leaves them out and stays a loop of minutes. `make test` runs them all.
SLOW_MODULES = frozenset(
    {
        "tests/annotation/test_judge_steps.py",
        "tests/generation/test_generation_backend_down.py",
        "tests/generation/test_generation_run.py",
        "tests/metrics/test_llm_checked.py",
        "tests/metrics/test_llm_vote.py",
        "tests/metrics/test_loading.py",
        "tests/metrics/test_lm_fluency.py",
        "tests/metrics/test_parapluie.py",
        "tests/metrics/test_pem.py",
        "tests/reports/test_analysis_meta.py",
        "tests/reports/test_analysis_report.py",
        "tests/reports/test_collection_rounds.py",
        "tests/reports/test_csv_every_cell_type.py",
        "tests/reports/test_data_version.py",
        "tests/reports/test_degenerate_data.py",
        "tests/reports/test_detector_per_campaign.py",
        "tests/reports/test_export_every_task_type.py",
        "tests/reports/test_figures_print.py",
        "tests/reports/test_incremental_report.py",
        "tests/reports/test_live_report_state_machine.py",
        "tests/reports/test_meteor_rescoring.py",
        "tests/reports/test_ppi_holdout.py",
        "tests/reports/test_report_command.py",
        "tests/reports/test_report_views.py",
        "tests/reports/test_report_worker_start.py",
        "tests/reports/test_report_workers.py",
        "tests/reports/test_span_detector.py",
        "tests/scoring/test_hostile_llm_server.py",
        "tests/scoring/test_llama_cpp_server.py",
        "tests/scoring/test_llm_backends.py",
        "tests/scoring/test_llm_scoring_service.py",
        "tests/scoring/test_parapluie_command.py",
        "tests/system/test_security_admin.py",
        "tests/system/test_security_defaults.py",
        "tests/system/test_security_exports.py",
        "tests/system/test_security_guessing.py",
        "tests/system/test_security_hardening.py",
        "tests/system/test_security_resume.py",
        "tests/system/test_security_smaller.py",
        "tests/system/test_settings.py",
    }
)


def pytest_collection_modifyitems(items):
    for item in items:
        if item.nodeid.split("::", 1)[0] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


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
def default_language():
    """Each test starts and ends in the site's default language. A test-client request the locale middleware
    answered in French leaves French active in this thread, and a later test's lazy text would read French."""
    translation.deactivate()
    yield
    translation.deactivate()


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
