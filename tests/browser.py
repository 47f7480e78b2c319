"""Shared Playwright set-up: Debian's Chromium, headless, no network chatter."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

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
# Playwright's assertions retry until their condition holds; these are only the
# bounds after which they give up, generous for a machine with saturated cores.
TIMEOUT_MS = 60_000
expect.set_options(timeout=TIMEOUT_MS)


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
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    yield page
    context.close()


def audit(page):
    """axe-core's WCAG 2 A/AA rules on the current page; returns the violations."""
    # Evaluated rather than added as a <script> tag: the page's CSP (script-src 'self') rightly refuses
    # an inline tag, and the audit should see the page as served, CSP included.
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "async () => await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']}})"
    )
    return [{"id": v["id"], "impact": v["impact"], "nodes": len(v["nodes"])} for v in result["violations"]]
