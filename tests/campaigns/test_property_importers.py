"""Property-based tests of every importer format with random and hostile files (hypothesis).

Whatever the bytes, an import either adds every row or raises CorpusImportError
with a message naming where and what the problem is; never another exception,
never a partial import. Formula-like cells come out neutralised in CSV exports.
"""

import csv
import io
import json
import re

import pytest
from hypothesis import HealthCheck, assume, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from campaigns.exports import FORMULA_TRIGGERS, write_csv
from campaigns.importers import MRPC_HEADER, PAWS_HEADER, CorpusImportError, import_pairs, parse_corpus
from campaigns.models import Campaign
from reports.exports import pairs_frame

pytestmark = pytest.mark.django_db

FORMATS = ["csv", "tsv", "jsonl", "mrpc", "paws"]
# Where the problem is, then what it is: "line 3: ...", "row 2: ...", or the whole file.
MESSAGE = re.compile(r"^(line \d+: \S|row \d+: \S|the file \S|unknown format)")
HOSTILE = [
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1",
    "<script>window.__pwned=1</script>",
    '"',
    '""',
    ",",
    "\t",
    "\r\n",
    "\n",
    "\x00",
    "\ufeff",
    "\u2028",
    "é",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "{",
    "}",
    "\\",
    " ",
]
FAST = hypothesis_settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

cells = st.one_of(
    st.text(max_size=30),
    st.sampled_from(HOSTILE),
    st.lists(st.sampled_from(HOSTILE) | st.text(max_size=5), max_size=6).map("".join),
)
tables = st.lists(st.lists(cells, min_size=1, max_size=5), min_size=0, max_size=6)


@pytest.fixture
def target(db):
    return Campaign.objects.create(slug="props", name="Props")


def check_import(campaign, data, **options):
    """Import, and check the all-or-nothing rule and the message; returns the result or the error."""
    before = campaign.pairs.count()
    try:
        result = import_pairs(campaign, data, **options)
    except CorpusImportError as error:
        assert campaign.pairs.count() == before, "a refused file must import nothing"
        assert MESSAGE.match(str(error)), f"the message should say where and what: {error}"
        return error
    assert campaign.pairs.count() == before + result.count
    return result


def render(format, header, rows):
    """A file of this format from a header and rows of cells, the way a tool would write it."""
    if format == "csv":
        out = io.StringIO()
        csv.writer(out, lineterminator="\r\n").writerows([header, *rows])  # quotes fields holding \r or \n
        return out.getvalue()
    if format == "jsonl":
        return "".join(json.dumps(dict(zip(header, row))) + "\n" for row in rows)
    return "\n".join("\t".join(line) for line in [header, *rows]) + "\n"


HEADERS = {
    "csv": ["id", "source", "hypothesis", "label"],
    "tsv": ["id", "source", "hypothesis", "label"],
    "jsonl": ["id", "source", "hypothesis", "label"],
    "mrpc": MRPC_HEADER,
    "paws": PAWS_HEADER,
}
ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252"]


@FAST
@given(format=st.sampled_from([*FORMATS, "auto"]), data=st.binary(max_size=400))
@example(format="csv", data=b"source,hypothesis\n\xff\xfe,x\n")
@example(format="jsonl", data=b"[" * 5000)
@example(format="jsonl", data=b'{"source": ' + b"[" * 100_000 + b"\n")
def test_random_bytes_import_whole_or_not_at_all(target, format, data):
    check_import(target, data, format=format)


@FAST
@given(
    format=st.sampled_from(FORMATS),
    rows=tables,
    encoding=st.sampled_from(ENCODINGS),
    damage=st.sampled_from(["none", "drop_cell", "extra_cell", "nul_byte", "bad_byte", "truncate"]),
)
def test_hostile_files_in_every_format_import_whole_or_not_at_all(target, format, rows, encoding, damage):
    header = HEADERS[format]
    rows = [(row * len(header))[: len(header)] for row in rows]
    if damage == "drop_cell" and rows:
        rows[-1] = rows[-1][:-1]
    if damage == "extra_cell" and rows:
        rows[0] = [*rows[0], "extra"]
    text = render(format, header, rows)
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        data = text.encode("utf-8", "replace")
    if damage == "nul_byte":
        data = data[: len(data) // 2] + b"\x00" + data[len(data) // 2 :]
    if damage == "bad_byte":
        data = data[: len(data) // 3] + b"\xc3\x28" + data[len(data) // 3 :]
    if damage == "truncate":
        data = data[: len(data) * 2 // 3]
    check_import(target, data, format=format)


@FAST
@given(format=st.sampled_from(FORMATS), length=st.integers(100_000, 300_000), where=st.sampled_from(["source", "id"]))
def test_huge_lines_are_refused_or_imported_whole(target, settings, format, length, where):
    settings.PARASOL_IMPORT_MAX_BYTES = 250_000
    header = HEADERS[format]
    row = {"id": "1", "source": "A sentence.", "hypothesis": "Another sentence.", "label": "1"}
    row[where] = "x" * length
    mrpc = {"Quality": "1", "#1 ID": row["id"], "#2 ID": "2", "#1 String": row["source"], "#2 String": "Other."}
    paws = {"id": row["id"], "sentence1": row["source"], "sentence2": "Other.", "label": "1"}
    values = {"mrpc": mrpc, "paws": paws}.get(format, row)
    outcome = check_import(target, render(format, header, [[values[name] for name in header]]).encode(), format=format)
    if len(render(format, header, [[values[name] for name in header]])) > 250_000:
        assert isinstance(outcome, CorpusImportError) and "larger than the limit" in str(outcome)


@FAST
@given(extra=st.integers(1, 5))
def test_too_many_rows_are_refused_whole(target, settings, extra):
    settings.PARASOL_IMPORT_MAX_ROWS = 10
    rows = [[f"s{i}", f"Source {i}.", f"Hypothesis {i}.", "0"] for i in range(10 + extra)]
    outcome = check_import(target, render("csv", HEADERS["csv"], rows).encode(), format="csv")
    assert isinstance(outcome, CorpusImportError) and "PARASOL_IMPORT_MAX_ROWS" in str(outcome)


# No carriage return: see test_a_carriage_return_inside_a_sentence_survives_the_export.
sentences = st.text(min_size=1, max_size=40).filter(lambda text: text.strip() and not {"\x00", "\r"} & set(text))
formula_sentences = st.tuples(st.sampled_from(["=", "+", "-", "@"]), sentences).map("".join)


@FAST
@given(
    format=st.sampled_from(["csv", "jsonl"]),
    pairs=st.lists(st.tuples(formula_sentences | sentences, formula_sentences | sentences), min_size=1, max_size=5),
)
def test_valid_files_import_every_row_and_exports_neutralise_formulas(target, format, pairs):
    # Tabs and line breaks are legal inside quoted CSV and JSON strings, so these files are valid.
    rows = [["", source, hypothesis, ""] for source, hypothesis in pairs]
    assume(all(source.strip() and hypothesis.strip() for _, source, hypothesis, _ in rows))
    before = target.pairs.count()
    result = check_import(target, render(format, HEADERS[format], rows).encode(), format=format)
    assert not isinstance(result, CorpusImportError), result
    assert target.pairs.count() == before + len(pairs)
    stored = list(target.pairs.order_by("-pk").values_list("source", "hypothesis")[: len(pairs)])[::-1]
    assert stored == [(source.strip(), hypothesis.strip()) for source, hypothesis in pairs]
    out = io.StringIO()
    write_csv(pairs_frame(target), out)
    for record in csv.DictReader(io.StringIO(out.getvalue())):
        for column in ("source", "hypothesis", "pair_id", "corpus"):
            cell = record[column]
            assert not cell.startswith(FORMULA_TRIGGERS), f"{column} cell {cell!r} would run as a formula"


def test_a_formula_cell_is_exported_with_an_apostrophe(target):
    import_pairs(target, b"source,hypothesis\n\"=cmd|' /C calc'!A0\",@SUM(1+1)\n", format="csv")
    out = io.StringIO()
    write_csv(pairs_frame(target), out)
    record = next(csv.DictReader(io.StringIO(out.getvalue())))
    assert record["source"] == "'=cmd|' /C calc'!A0"
    assert record["hypothesis"] == "'@SUM(1+1)"


@FAST
@given(format=st.sampled_from(FORMATS), rows=tables)
def test_parsing_alone_raises_only_corpus_import_errors(format, rows):
    data = render(format, HEADERS[format], [(row * 5)[: len(HEADERS[format])] for row in rows]).encode()
    try:
        parse_corpus(data, format=format)
    except CorpusImportError as error:
        assert MESSAGE.match(str(error)), str(error)


def test_a_carriage_return_inside_a_sentence_survives_the_export(target):
    import_pairs(target, b'source,hypothesis\n"One\rtwo",Three\n', format="csv")
    out = io.StringIO()
    write_csv(pairs_frame(target), out)
    records = list(csv.DictReader(io.StringIO(out.getvalue(), newline="")))
    assert [record["source"] for record in records] == ["One\rtwo"]
