"""Page, LaTeX downloads and one-file HTML: the same cells, bold alike, in every table of each task type."""

import re

import pytest
from django.test import Client
from django.urls import reverse
from lxml import html as lxml_html

from reports.analysis.latex import SPECIALS, SYMBOLS
from reports.analysis.present import spec_of
from reports.analysis.vocabulary import NAME_TITLES, title_for
from reports.cache import get_report
from reports.sections import sections_for, with_task_tables
from reports.standalone import standalone_html
from tests.report_fixtures import report_campaign
from tests.reports.table_rules import caption_problems, leaked_names
from tests.toys import every_task_type

pytestmark = pytest.mark.report

# pandas' LaTeX escapes of the characters SPECIALS does not spell alike.
PANDAS_ESCAPES = {"\\textasciitilde ": "~", "\\textasciicircum ": "^", "\\textbackslash ": "\\"}


def table_cells(document, name):
    """The data cells of table `name`'s block as (text, bold) per row; None when the block shows no table."""
    blocks = document.xpath(f'//div[@id="table-{name}"]')
    assert len(blocks) == 1, name
    rows = blocks[0].xpath(".//table/tbody/tr")
    if not rows:
        return None
    return [[(td.text_content().strip(), bool(td.xpath(".//strong"))) for td in tr.xpath("./td")] for tr in rows]


def unescape(cell):
    for command, text in PANDAS_ESCAPES.items():
        cell = cell.replace(command, text)
    for character, command in SPECIALS.items():
        cell = cell.replace(command, character)
    for symbol, command in SYMBOLS.items():
        cell = cell.replace(command, symbol)
    return cell.strip()


def latex_rows(part):
    """The body rows of one LaTeX table (a float or a longtable), each a list of its cells as written."""
    if "\\endlastfoot" in part:
        body = part.split("\\endlastfoot", 1)[1].split("\\end{longtable}", 1)[0]
    else:
        body = part.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    lines = [line.rstrip().removesuffix("\\\\") for line in body.strip().splitlines() if line.strip()]
    return [[cell.strip() for cell in re.split(r"(?<!\\)&", line)] for line in lines]


def latex_cells(tex, widths):
    """The body cells of a LaTeX table as (text, bold), the last `width` cells of each row (the stub dropped).

    A table split into parts by columns repeats its row headers in each: the parts' columns are joined.
    """
    parts = [latex_rows(part) for part in re.split(r"\\begin\{(?:table|sidewaystable|longtable)\}", tex)[1:]]
    result = []
    for position, width in enumerate(widths):
        rows = [part[position] for part in parts]
        stub = (sum(len(row) for row in rows) - width) // len(rows)
        cells = [cell for row in rows for cell in row[stub:]]
        parsed = []
        for cell in cells:
            bold = re.fullmatch(r"\\textbf\{(.*)\}", cell)
            parsed.append((unescape(bold.group(1) if bold else cell), bool(bold)))
        result.append(parsed)
    assert all(len(part) == len(widths) for part in parts)
    return result


@every_task_type
def test_page_latex_and_one_file_html_agree_cell_by_cell(researcher, task_type, toy_metric):
    campaign = report_campaign(researcher, task_type)
    client = Client()
    client.force_login(researcher)
    query = f"?c={campaign.slug}&label=gold"
    page = client.get(reverse("reports-show-report", args=[campaign.slug]) + "?label=gold")
    assert page.status_code == 200
    document = lxml_html.fromstring(page.content.decode())
    cached = get_report([campaign], "gold")
    # The one-file report as its download writes it, less the figures' pixels (this test reads cells; drawing the
    # eleven figures of a 17-metric report was half its time, and test_report_views downloads them).
    no_pixels = standalone_html([campaign], cached.report, cached.signatures, figure_png=lambda spec: b"")
    standalone = lxml_html.fromstring(no_pixels)
    blocks = document.xpath('//div[contains(@class, "report-table-block")]')
    names = [block.get("id").removeprefix("table-") for block in blocks]
    report = with_task_tables(cached.report, [campaign])
    # Every table the task type's sections declare is on the page (a new table is checked as soon as it is declared).
    declared = [name for section in sections_for(task_type) if not section.reason(report) for name in section.tables]
    assert names == declared
    compared, bold_seen = 0, False
    for name in names:
        cells = table_cells(document, name)
        assert cells == table_cells(standalone, name), name
        if cells is None:
            # A table not shown says why, and offers nothing to download.
            assert document.xpath(f'//div[@id="table-{name}"]//p[contains(@class, "empty-reason")]'), name
            continue
        check_words_and_caption(document, report, name)
        links = document.xpath(f'//div[@id="table-{name}"]//a/text()')
        assert links == ["CSV", "CSV with notes", "LaTeX"], (name, links)
        tex = client.get(reverse("reports-download-report-latex", args=[name]) + query).content.decode()
        assert latex_cells(tex, [len(row) for row in cells]) == cells, name
        for caption in re.findall(r"\\caption\{(.*)\}", tex):
            assert caption_problems(unescape(caption)) == [], (name, caption)
        compared += 1
        bold_seen |= any(bold for row in cells for _text, bold in row)
    # At least the type's own table, Systems and Estimates (a type of one table of its own, as the toy, has three).
    assert compared >= 3 and bold_seen, names


def check_words_and_caption(document, report, name):
    """Table `name` on the page: one caption that adds to its title; words only (no registry name, no token id,
    no column name printed as the analysis spells it) in its headers and cells."""
    block = document.xpath(f'//div[@id="table-{name}"]')[0]
    title = block.xpath("./h3")[0].text_content().strip()
    assert title == spec_of(report, name).heading
    captions = block.xpath('.//p[contains(@class, "table-caption")]')
    assert len(captions) == 1 and not block.xpath(".//table/caption"), name
    assert caption_problems(captions[0].text_content(), title) == [], name
    headers = [th.text_content().strip() for th in block.xpath(".//table//th")]
    texts = headers + [td.text_content().strip() for td in block.xpath(".//table//td")]
    assert {text: leaked_names(text) for text in texts if leaked_names(text)} == {}, name
    # A column the vocabulary does not name would be printed as the analysis spells it ("Pearson ci low").
    raw = {title_for(column) for column in report.tables[name].columns if str(column) not in NAME_TITLES}
    assert set(headers) & raw == set(), (name, set(headers) & raw)
