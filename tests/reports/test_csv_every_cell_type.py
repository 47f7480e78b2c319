"""Every cell of every CSV export guarded, whatever its Python type (issue 36, section 4).

The guard used to skip what was not a string: a list or dict (metadata, a judgment's values)
was written as pandas' repr, so `["x;=1+1"]` reached a spreadsheet that splits on ";" as a
formula. `campaigns.exports.csv_cell` is now the one guard of every cell; these tests draw
values of every type and read back every export path: the pairs and judgments CSVs (page,
API, `export_pairs`), the report tables (page, with comments, and the `report` command), the
span tables and `score_file`.
"""

import csv
import datetime
import decimal
import io
import json
import re
import uuid

import numpy as np
import pandas as pd
from django.core.management import call_command
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from annotation.models import Assignment, Judgment
from campaigns.exports import csv_cell, write_csv
from campaigns.models import Campaign, Pair
from reports.analysis.report import TABLE_NAMES
from reports.task_sections.spans import SPAN_TABLE_NAMES
from tests.factories import make_judge, without_controls

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
# What a spreadsheet runs: a trigger at the start of a cell, or after a separator it may split on.
AFTER_SEPARATOR = re.compile(r"[;,|\t\r\n]\s*(?:[=+@]|-\S)")
# One value of each type a JSON field holds, nested included: the review's example among them.
EVERY_TYPE = [None, True, -3, -0.5, "x;=1+1", ["x;=1+1"], {"k": ["@SUM(1)", {"n": "a|-cmd"}]}]
HOSTILE = ["=1+1", "x;=1+1", "@SUM(1)", "-cmd", "+1", "a\n=1", "\t=1", "b|=2", "c, -d", '=HYPERLINK("x")']

hostile_text = st.sampled_from(HOSTILE) | st.text(alphabet=list("=+-@;,|\t\r\n x1'\"[]{}é"), max_size=10)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | hostile_text
)
# What a JSON field can hold, nested: the metadata of a pair, the values of a judgment.
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(hostile_text, children, max_size=3),
    max_leaves=6,
)


class Opaque:
    def __str__(self):
        return "=1+1;@x"


# What a frame may hold besides: numpy and pandas scalars, tuples, sets, bytes, dates, any object.
python_values = (
    json_values
    | st.floats()
    | st.tuples(hostile_text, json_scalars)
    | st.frozensets(hostile_text, max_size=2)
    | st.binary(max_size=6).map(lambda data: b"=" + data)
    | st.sampled_from(
        [
            np.int64(-3),
            np.float32(-0.5),
            np.bool_(True),
            pd.NA,
            pd.NaT,
            decimal.Decimal("-1.5"),
            datetime.date(2024, 1, 2),
            uuid.UUID(int=7),
            Opaque(),
            {1: "=1", "a": ["-x"]},  # keys of mixed types: unsortable
        ]
    )
)


def formula_cells(text):
    """The cells of a CSV text a spreadsheet would evaluate as a formula (numbers are numbers, not formulas)."""
    return [
        cell
        for row in csv.reader(io.StringIO(text))
        for cell in row
        if not _number(cell) and (cell.startswith(TRIGGERS) or AFTER_SEPARATOR.search(cell))
    ]


def _number(cell):
    try:
        float(cell)
    except ValueError:
        return False
    return True


@settings(max_examples=300, deadline=None, database=None)
@given(values=st.lists(python_values, min_size=1, max_size=6), name=python_values)
def test_no_cell_of_any_type_is_written_as_a_formula(values, name):
    buffer = io.StringIO()
    write_csv(pd.DataFrame({"plain": values, "same": values}).rename(columns={"plain": name}), buffer)
    assert formula_cells(buffer.getvalue()) == []


@settings(max_examples=200, deadline=None, database=None)
@given(value=json_values)
def test_a_nested_value_is_written_as_its_json_guarded(value):
    cell = csv_cell(value)
    if isinstance(value, list | dict):  # the guard only inserts apostrophes into the JSON text
        assert cell.replace("'", "") == json.dumps(value, ensure_ascii=False, sort_keys=True).replace("'", "")
    elif not isinstance(value, str):
        assert cell == value  # a number stays a number; None stays missing


def test_the_reported_value_is_guarded():
    """The review's example, written before this fix as ['x;=1+1'] (pandas' repr, unguarded)."""
    buffer = io.StringIO()
    write_csv(pd.DataFrame({"note": [["x;=1+1"]], "meta": [{"k": "a;@SUM(1)"}]}), buffer)
    assert buffer.getvalue().splitlines()[1] == '"[""x;\'=1+1""]","{""k"": ""a;\'@SUM(1)""}"'


def test_comment_lines_are_guarded():
    buffer = io.StringIO()
    write_csv(pd.DataFrame({"a": [1]}), buffer, comments=["campaign x;=1+1"])
    assert formula_cells(buffer.getvalue()) == []


def hostile_campaign(researcher, metadata, values, task_type="similarity"):
    """A fresh campaign: pairs whose ids, corpora and metadata are hostile, a judgment whose values are."""
    campaign = Campaign.objects.create(
        slug=f"c{Campaign.objects.count()}-{uuid.uuid4().hex[:6]}", name="=1+1", created_by=researcher
    )
    campaign.task_type = task_type
    campaign.save()
    without_controls(campaign)
    pairs = Pair.objects.bulk_create(
        Pair.build(
            campaign,
            external_id=f"{HOSTILE[i % len(HOSTILE)]}{i}",
            corpus=HOSTILE[i % len(HOSTILE)],
            source=f"Source number {i} here.",
            hypothesis=f"Hypothesis number {i} {HOSTILE[i % len(HOSTILE)]}",
            gold_label=i % 2,
            metadata={"system": HOSTILE[i % 2], **{f"k{j}": value for j, value in enumerate(metadata)}},
        )
        for i in range(6)
    )
    for level in ("good", "native"):
        judge = make_judge(campaign, level=level)
        for position, pair in enumerate(pairs, start=1):
            assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
            answer = {"answer": "same_meaning" if pair.gold_label else "very_different"}
            if task_type == "spans":
                answer = {"tagging": {"source": [0], "hypothesis": [1]}}
            answer |= {f"v{j}": value for j, value in enumerate(values)}
            Judgment.objects.create(assignment=assignment, judge=judge, pair=pair, values=answer)
    return campaign


def streamed(response):
    return b"".join(response.streaming_content).decode()


@settings(max_examples=6, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(metadata=st.lists(json_values, min_size=1, max_size=3), values=st.lists(json_values, max_size=2))
@example(metadata=EVERY_TYPE, values=EVERY_TYPE)
def test_no_export_path_writes_a_formula_cell(client, researcher, tmp_path_factory, metadata, values):
    campaign = hostile_campaign(researcher, metadata, values)
    client.force_login(researcher)
    out = tmp_path_factory.mktemp("exports")
    call_command("export_pairs", campaign.slug, "--out", str(out / "pairs.csv"), stdout=io.StringIO())
    texts = {
        "pairs page": streamed(client.get(reverse("reports-export-pairs", args=[campaign.slug]))),
        "judgments page": streamed(client.get(reverse("reports-export-judgments", args=[campaign.slug]))),
        "pairs API": streamed(client.get(f"/api/campaigns/{campaign.slug}/export/?kind=pairs")),
        "judgments API": streamed(client.get(f"/api/campaigns/{campaign.slug}/export/?kind=judgments")),
        "export_pairs": (out / "pairs.csv").read_text(encoding="utf-8"),
    }
    for path, text in texts.items():
        assert formula_cells(text) == [], path
        assert len(list(csv.reader(io.StringIO(text)))) > 1, path


def test_no_report_table_or_span_table_writes_a_formula_cell(client, researcher, tmp_path):
    """The tables' cells (pair ids, corpora, systems, judges) from every report path, with a value of each type."""
    campaign = hostile_campaign(researcher, EVERY_TYPE, EVERY_TYPE)
    spans = hostile_campaign(researcher, EVERY_TYPE, EVERY_TYPE, task_type="spans")
    client.force_login(researcher)
    texts = {}
    for name in TABLE_NAMES:
        url = reverse("reports-download-report-table", args=[name]) + f"?c={campaign.slug}"
        texts[name] = client.get(url).content.decode()
        texts[f"{name} with comments"] = client.get(url + "&comments=1").content.decode()
    for name in SPAN_TABLE_NAMES:
        response = client.get(reverse("reports-download-task-table", args=[spans.slug, name]))
        texts[f"span {name}"] = response.content.decode()
    call_command("report", campaign.slug, "--out", str(tmp_path / "report"), "--no-figures", stdout=io.StringIO())
    for path in (tmp_path / "report").glob("*.csv"):
        texts[f"report command {path.name}"] = path.read_text(encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"id": h, "source": f"S {h}", "hypothesis": h, "corpus": h}) + "\n" for h in HOSTILE),
        encoding="utf-8",
    )
    call_command("score_file", str(corpus), "--out", str(tmp_path / "scored.csv"), "--metrics", "lev")
    texts["score_file"] = (tmp_path / "scored.csv").read_text(encoding="utf-8")
    assert len([name for name in texts if name.startswith("report command")]) >= len(TABLE_NAMES)
    for path, text in texts.items():
        assert formula_cells(text) == [], path
