"""The report side of the task type seam: every task type has a report section, found by its name."""

import pytest

from annotation.tasktypes.registry import task_type_names
from reports.sections import TABLE_HEADINGS
from reports.task_sections import NoTaskSection, task_section
from reports.task_sections.base import TaskSection


@pytest.mark.parametrize("name", task_type_names())
def test_every_task_type_has_a_report_section_whose_tables_have_headings(name):
    report = task_section(name)
    assert isinstance(report, TaskSection) and report.sections
    for section in report.sections:
        assert all(table in TABLE_HEADINGS for table in section.tables), section.slug
    assert report.tables is not None or not report.headings


def test_a_task_type_without_a_report_section_is_refused_naming_those_with_one():
    with pytest.raises(NoTaskSection, match="'ranking'.*task types with one: similarity"):
        task_section("ranking")
