"""The report side of the task type seam: every task type has a report section, found by its name."""

from types import SimpleNamespace

import pytest

from campaigns.task_types import task_type_names
from reports.analysis import build_report
from reports.figures import _all_specs
from reports.sections import TABLE_HEADINGS, analysis_notes
from reports.task_sections import NoTaskSection, task_section, task_sections
from reports.task_sections.base import TaskSection
from tests.reports.test_analysis_report import DIRECTIONS, FAST, data
from tests.toys import every_task_type


@every_task_type
def test_every_task_type_has_a_report_section_whose_tables_have_headings(task_type):
    report = task_section(task_type)
    assert isinstance(report, TaskSection) and report.sections
    for section in report.sections:
        assert all(table in TABLE_HEADINGS for table in section.tables), section.slug
    assert report.tables is not None or not report.headings


def test_a_task_type_without_a_report_section_is_refused_naming_those_with_one():
    with pytest.raises(NoTaskSection, match="'ranking'.*task types with one: similarity"):
        task_section("ranking")


def test_every_step_writing_notes_is_shown_by_some_report_and_every_declared_step_exists():
    # A typo in a section's `notes` would hide a step's notes everywhere: the names must be the analysis' own.
    pairs, judgments = data(n=24)
    report = build_report(pairs, judgments, DIRECTIONS, label_source="human", **FAST)
    declared = {step for section in task_sections() for step in section.note_steps}
    assert declared == set(report.notes_by_step)


@pytest.mark.parametrize("name", task_type_names())
def test_a_report_shows_the_notes_of_the_steps_its_sections_show_and_every_other_note(name):
    shown_steps = task_section(name).note_steps
    steps = sorted(set(shown_steps) | {"labels", "agreement", "rank_correlation", "by_group", "systems", "estimates"})
    notes_by_step = {step: [f"a note of {step}"] for step in steps}
    report = SimpleNamespace(notes=["a note of the data", *(f"a note of {step}" for step in steps)])
    report.notes_by_step = notes_by_step
    expected = ["a note of the data", *(f"a note of {step}" for step in steps if step in shown_steps)]
    assert analysis_notes(report, name) == expected


def test_the_figures_a_report_notes_are_those_of_the_kinds_its_sections_show():
    kinds = {kind for section in task_sections() for kind in section.figure_kinds}
    pairs, judgments = data(n=24)
    pairs = pairs.assign(system=pairs["generator"])  # systems, so the systems figure has something to draw
    report = build_report(pairs, judgments, DIRECTIONS, label_source="gold", **FAST)
    assert {spec.kind for spec in _all_specs(report)} == kinds  # every kind is shown by some report
