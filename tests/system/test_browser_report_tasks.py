"""The report of each task type in Chromium, with human and with gold labels: words only, nothing clipped, axe-clean
(every rule that can fail on the judges' labels of each type, and on the gold labels of the paper's type).

Four systems, two corpora, every registered metric and the toy (tests/report_fixtures.py). Run with
PARASOL_DOC_SCREENSHOTS=1 to write the screenshots of docs/reports.md (docs/img/report-<task>.png).
"""

import json
import os
import re
from pathlib import Path

import pytest
from django.conf import settings

from reports.cache import get_report
from reports.sections import with_task_tables
from tests.browser import AXE, SCREENSHOTS
from tests.report_fixtures import report_campaign
from tests.reports.table_rules import MIN_POINTS
from tests.system.test_browser_report import INTERNAL_NAMES, SNAKE_CASE, log_in, raw_column_names, reader_text
from tests.toys import every_task_type

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DOC_IMAGES = Path(__file__).resolve().parent.parent.parent / "docs" / "img"
# Python's and pandas' words for nothing, yes and no, never the reader's.
RAW_VALUES = re.compile(r"\b(None|True|False|nan|NaN|NaT)\b")
# An A4 page less 12 mm margins (report.css @page), in CSS pixels: portrait, then the landscape page of wide tables.
A4_PORTRAIT_PX = round((210 - 24) / 25.4 * 96)
A4_LANDSCAPE_PX = round((297 - 24) / 25.4 * 96)
SCREEN_PX = 1280


def audit_all_rules(page):
    """axe-core with every rule that can report a violation, experimental ones included; returns the violations.

    Left out: the rules tagged review-item (hidden-content: it only lists hidden elements for a person to look
    at and never reports a violation, yet took a quarter of the audit's 25 s by reading every element's style).
    """
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate(
        "async () => await axe.run(document, {runOnly: {type: 'rule', values: axe.getRules()"
        ".filter(rule => !rule.tags.includes('review-item')).map(rule => rule.ruleId)}})"
    )
    return [
        {"id": v["id"], "nodes": [n["target"] for n in v["nodes"]][:5], "help": v["help"]} for v in result["violations"]
    ]


def overflowing_tables(page, width, *, wide):
    """Tables (of wide blocks or of the others) wider than their block at a viewport `width` pixels wide."""
    page.set_viewport_size({"width": width, "height": 1000})
    return page.evaluate(
        """wide => [...document.querySelectorAll('.report-table-block')]
            .filter(block => block.classList.contains('wide') === wide && block.querySelector('table'))
            .filter(block => block.querySelector('table').getBoundingClientRect().width > block.clientWidth + 1)
            .map(block => block.id)""",
        wide,
    )


def check_words(page):
    text = reader_text(page)
    leaked = {name for name in INTERNAL_NAMES if re.search(rf"\b{re.escape(name)}\b", text)}
    assert leaked == set(), leaked
    assert SNAKE_CASE.findall(text) == []
    assert RAW_VALUES.findall(text) == []
    headers = {h.strip() for h in page.locator("main th").all_inner_texts()}
    assert headers & raw_column_names() == set()


def check_screen(page):
    page.set_viewport_size({"width": SCREEN_PX, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= SCREEN_PX
    clipped = page.evaluate(
        """[...document.querySelectorAll('.table-scroll')]
            .filter(box => box.getBoundingClientRect().right > box.closest('.card').getBoundingClientRect().right + 1)
            .map(box => box.parentElement.id)"""
    )
    assert clipped == []
    assert overflowing_cards(page) == []
    stubs = page.locator(".report-table .stub")
    assert stubs.count() > 0 and stubs.first.evaluate("e => getComputedStyle(e).position") == "sticky"


def overflowing_cards(page):
    """Tables wider than their card outside a scrolling box, and titles or captions cut off (not wrapped)."""
    return page.evaluate(
        """[...document.querySelectorAll('.report-table-block')].flatMap(block => {
            const card = block.closest('.card').getBoundingClientRect();
            const problems = [];
            const table = block.querySelector('table');
            if (table && table.getBoundingClientRect().right > card.right + 1) {
                const box = table.closest('.table-scroll');
                const scrolls = box && ['auto', 'scroll'].includes(getComputedStyle(box).overflowX)
                    && box.getBoundingClientRect().right <= card.right + 1;
                if (!scrolls) problems.push(`${block.id}: the table overflows its card`);
            }
            for (const text of block.querySelectorAll('h3, .table-caption, .empty-reason')) {
                const box = text.getBoundingClientRect();
                if (box.right > card.right + 1 || text.scrollWidth > text.clientWidth + 1)
                    problems.push(`${block.id}: "${text.textContent.slice(0, 40)}" is cut off`);
            }
            return problems;
        })"""
    )


def print_sizes_below(page, points):
    """Cells, headers and captions of the tables printed in type smaller than `points`."""
    return page.evaluate(
        """points => [...document.querySelectorAll('.report-table th, .report-table td, .table-caption')]
            .map(e => [e.closest('.report-table-block').id, parseFloat(getComputedStyle(e).fontSize) * 72 / 96])
            .filter(([id, size]) => size < points - 0.01)""",
        points,
    )


def check_print(page):
    page.emulate_media(media="print")
    assert overflowing_tables(page, A4_PORTRAIT_PX, wide=False) == []
    assert overflowing_tables(page, A4_LANDSCAPE_PX, wide=True) == []
    assert print_sizes_below(page, MIN_POINTS) == []
    page.emulate_media(media="screen")


# What each screenshot shows: the table that carries the task type's measure.
SCREENSHOT_OF = {
    "similarity": "#table-table3",
    "criteria": "#table-criteria_by_system",
    "spans": "#table-span_degree_by_system",
    "similarity+spans": "#table-span_degree_by_system",
}


def screenshot(page, task_type):
    if task_type not in SCREENSHOT_OF:
        return  # a type the docs do not show (the toy)
    folder = DOC_IMAGES if os.environ.get("PARASOL_DOC_SCREENSHOTS") else SCREENSHOTS
    folder.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": SCREEN_PX, "height": 900})
    page.locator(SCREENSHOT_OF[task_type]).screenshot(path=str(folder / f"report-{task_type}.png"))


@every_task_type
def test_the_report_of_each_task_type_reads_like_a_paper_on_screen_and_in_print(
    live_server, page, researcher, task_type, toy_metric
):
    campaign = report_campaign(researcher, task_type)
    log_in(page, live_server, researcher)
    for label_source in ("human", "gold"):
        # Computed here first (the live server shares this process's cache): the page then opens at once.
        with_task_tables(get_report([campaign], label_source).report, [campaign])
        page.goto(f"{live_server.url}/campaigns/{campaign.slug}/report/?label={label_source}")
        assert page.locator("#report-systems .report-table").count() >= 1
        check_words(page)
        check_screen(page)
        check_print(page)
        if label_source == "human" or task_type == settings.DEFAULT_TASK_TYPE:
            # axe-core with every rule takes about 25 s on a report of 17 metrics. The gold page is the same
            # template over the same tables, less the judges' sections: it is audited for the paper's type.
            violations = audit_all_rules(page)
            assert violations == [], json.dumps(violations, indent=1)
    page.goto(f"{live_server.url}/campaigns/{campaign.slug}/report/?label=human")
    screenshot(page, task_type)
