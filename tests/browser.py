"""Shared Playwright set-up: Debian's Chromium, headless, no network chatter."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# axe-core comes from tests/system/package.json (`make test` installs it there).
AXE = Path(__file__).resolve().parent / "system" / "node_modules" / "axe-core" / "axe.min.js"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "var" / "screenshots"


@pytest.fixture(scope="module")
def browser():
    # Playwright's sync API runs an event loop in this thread; the test's own
    # ORM calls stay synchronous and are safe.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()
