"""The sections of a report page, in order, and what each needs from the data.

Which sections a report shows, and which tables its task type reads from the database
(PEM's criteria, the span tagging), is the task type's report section, registered in
`reports.task_sections` under the task type's name; a section (`task_sections.base.Section`)
lists the tables it shows and answers, for a given report, why it has nothing to show (one
line the page prints instead). A new analysis joins by adding a `Section` to the task
sections that show it; the tables a task type adds join the report through `with_task_tables`.
"""

from collections.abc import Mapping

from campaigns.task_types import task_type_of
from reports.analysis import TABLE_NAMES
from reports.analysis.present import SPECS, caption_html, empty_reason, is_wide, shown, spec_of, table_html
from reports.analysis.systems import MIN_SYSTEMS_FOR_CORRELATION
from reports.figures import skipped_figures
from reports.task_sections import task_section, task_section_of, task_sections


class _Headings(Mapping):
    """Every table's heading, from the declarations: the report's, then each registered task type's (when asked)."""

    def _all(self):
        report = {name: table.heading for name, table in SPECS.items()}
        return {**report, **{name: heading for s in task_sections() for name, heading in s.headings.items()}}

    def __getitem__(self, name):
        return self._all()[name]

    def __iter__(self):
        return iter(self._all())

    def __len__(self):
        return len(self._all())


TABLE_HEADINGS = _Headings()


def task_of(campaigns) -> str:
    """The name of the campaigns' task type (campaigns compared in one report share it)."""
    return task_type_of(campaigns[0]).name


def with_task_tables(report, campaigns):
    """`report` with the tables its task type reads from the database (PEM's criteria, the span tagging) added."""
    return task_section_of(campaigns).with_tables(report, campaigns)


def systems_summary(report) -> dict:
    """How many systems the pairs name, and whether that is enough for system-level correlations to mean anything."""
    n = len(report.tables["systems"])
    return {"n": n, "meaningful": n >= MIN_SYSTEMS_FOR_CORRELATION, "minimum": MIN_SYSTEMS_FOR_CORRELATION}


def sections_for(task) -> list:
    return list(task_section(task).sections)


def sections_of(report, links=lambda name: {}, *, task) -> list[dict]:
    """The sections of `task`'s report for a template: title, anchor, the reason it is empty or its tables' HTML.

    `links(name)` gives a table's download URLs (none in the one-file report).
    """
    result = []
    for section in sections_for(task):
        reason = section.reason(report)
        tables = [] if reason else [_table(report, name, links) for name in section.tables]
        result.append(
            {
                "slug": section.slug,
                "title": section.title,
                "template": section.template,
                "reason": reason,
                "tables": tables,
            }
        )
    return result


def _table(report, name, links):
    """A table for the page: its title, and its HTML and downloads, or the one line saying why it is not shown."""
    result = shown(report, name) if name in report.tables else None
    reason = empty_reason(report, name, result)
    title = spec_of(report, name).heading  # this task type's declaration of the table
    if reason:
        return {"name": name, "title": title, "reason": reason}
    caption_id = f"caption-{name}"
    return {
        "name": name,
        "title": title,
        "html": table_html(result, caption_id),
        "caption": caption_html(result, caption_id),
        "wide": is_wide(result),
        **links(name),
    }


def analysis_notes(report, task) -> list[str]:
    """The report's notes a page of `task` shows: every note of no step (the data's, the metrics'), and
    those of the steps whose results its sections show (`Section.notes`)."""
    shown_steps = task_section(task).note_steps
    hidden = {note for step, notes in report.notes_by_step.items() if step not in shown_steps for note in notes}
    return [note for note in report.notes if note not in hidden]


def notes_for(report, task) -> list[str]:
    """The notes a page of `task` shows (`analysis_notes`), then those naming the figures of the kinds its
    sections show that were left out for having nothing to draw."""
    return analysis_notes(report, task) + skipped_figures(report, kinds=task_section(task).figure_kinds)


def download_only() -> list[str]:
    """The tables no section shows: offered as downloads only."""
    shown = {name for task in task_sections() for section in task.sections for name in section.tables}
    return [name for name in TABLE_NAMES if name not in shown]


def tables_with_content(report, task) -> list[str]:
    """The tables worth exporting: those of sections with something to show, then download-only ones with rows."""
    listed = [name for section in sections_for(task) for name in section.tables] + download_only()
    return [name for name in dict.fromkeys(listed) if has_content(report, task, name)]


def has_content(report, task, name) -> bool:
    """Whether table `name` is worth exporting (`tables_with_content`), laying out that table alone: a
    download asks about one table, and laying out every table of a report takes about a second."""
    if name not in report.tables:
        return False
    if name in download_only():
        return not name.startswith("curves_") and not report.tables[name].empty
    return any(
        name in section.tables and not section.reason(report) and not empty_reason(report, name)
        for section in sections_for(task)
    )
