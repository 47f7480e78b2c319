"""Shared Playwright set-up: Debian's Chromium, headless, no network chatter."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
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


# A judge page says when its script is ready (static/js/judge.js: its handlers in place, the item settled); a
# page without that script has nothing to wait for.
SCRIPTS_READY = (
    "() => !document.querySelector('script[src*=\"/js/judge\"]') || document.body.hasAttribute('data-judge-ready')"
)


def ready(page):
    """Wait until the page's script is ready: a key pressed or typed earlier would go to a page without handlers
    (quiet machines are fast enough to get there; loaded ones hid it)."""
    page.wait_for_function(SCRIPTS_READY)


# The deepest elements that end past the page's right edge and are not inside a box that scrolls: what widens it.
STICKING_OUT = """width => {
  const clipped = e => {
    for (let box = e.parentElement; box; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== "visible") return box.getBoundingClientRect().right <= width + 1;
    }
    return false;
  };
  const past = [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > width + 1 && !clipped(e));
  return past.filter(e => !past.some(other => other !== e && e.contains(other))).slice(0, 5)
    .map(e => `${e.tagName}.${e.className} in #${e.closest("[id]")?.id}`);
}"""


def assert_fits_width(page, width, timeout_ms=TIMEOUT_MS):
    """The page, once laid out as served (its stylesheets loaded, its script ready), does not scroll sideways at
    `width`; else fail naming what sticks out. Waits for the condition: a page still loading on a busy machine can
    be wider for a moment, which is not what a judge sees."""
    page.wait_for_load_state("load")
    ready(page)
    try:
        page.wait_for_function(f"() => document.documentElement.scrollWidth <= {width}", timeout=timeout_ms)
    except PlaywrightTimeoutError:
        wide = page.evaluate("document.documentElement.scrollWidth")
        names = ", ".join(page.evaluate(STICKING_OUT, width))
        raise AssertionError(f"the page scrolls sideways: {wide} > {width}: {names}") from None


def keys_wait_for_scripts(page):
    """Every key the test presses or types on `page` waits until the page's script is ready (`ready`)."""
    keyboard = page.keyboard  # Playwright hands out one keyboard object per page: its methods are wrapped once

    def waiting(action):
        def wrapped(*args, **kwargs):
            ready(page)
            return action(*args, **kwargs)

        return wrapped

    for name in ("press", "type", "down", "insert_text"):
        setattr(keyboard, name, waiting(getattr(keyboard, name)))
    return page


@pytest.fixture
def page(browser):
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    page = keys_wait_for_scripts(context.new_page())
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
