"""The report side of the task type seam: every task type has a report section, found by its name."""

import pytest

from reports.sections import TITLES
from reports.task_sections import NoTaskSection, task_section
from reports.task_sections.base import TaskSection
from tests.toys import every_task_type


@every_task_type
def test_every_task_type_has_a_report_section_whose_tables_have_titles(task_type):
    report = task_section(task_type)
    assert isinstance(report, TaskSection) and report.sections
    for section in report.sections:
        assert all(table in TITLES for table in section.tables), section.slug
    assert report.tables is not None or not report.titles


def test_a_task_type_without_a_report_section_is_refused_naming_those_with_one():
    with pytest.raises(NoTaskSection, match="'ranking'.*task types with one: similarity"):
        task_section("ranking")
