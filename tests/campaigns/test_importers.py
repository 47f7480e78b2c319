import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaigns.importers import (
    CorpusImportError,
    PairRow,
    RejectedRow,
    detect_format,
    import_pairs,
    import_rows,
    parse_corpus,
    readers,
)
from campaigns.models import Pair

BOM = b"\xef\xbb\xbf"
MRPC = (
    BOM + b"Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\r\n"
    b'1\t702876\t702977\t"Amrozi accused his brother , whom he called "the witness'
    b'\t  Referring to him as only "the witness" , Amrozi accused his brother .  \r\n'
    b"0\t2108705\t2108831\tYucaipa owned Dominick 's .\tYucaipa bought Dominick 's in 1995 .\r\n"
)
PAWS = (
    b"id\tsentence1\tsentence2\tlabel\n"
    b'1\tIn Paris , in October 1560 , he met " the English ambassador .'
    b"\tIn October 1560 , he met with the English ambassador in Paris .\t1\n"
    b"2\tThe NBA season of 1975 .\tThe 1975 season of the NBA .\t0\n"
)


def jsonl(*records):
    return "\n".join(json.dumps(record) for record in records).encode() + b"\n"


def test_it_parses_mrpc_with_bom_and_literal_quotes():
    rows = parse_corpus(MRPC)

    assert rows == [
        PairRow(
            external_id="702876-702977",
            corpus="MRPC",
            source='"Amrozi accused his brother , whom he called "the witness',
            hypothesis='Referring to him as only "the witness" , Amrozi accused his brother .',
            gold_label=1,
            metadata={},
        ),
        PairRow("2108705-2108831", "MRPC", "Yucaipa owned Dominick 's .", "Yucaipa bought Dominick 's in 1995 .", 0),
    ]


def test_it_parses_paws():
    rows = parse_corpus(PAWS, filename="train.tsv")

    assert [(row.external_id, row.corpus, row.gold_label) for row in rows] == [("1", "PAWS", 1), ("2", "PAWS", 0)]
    assert rows[0].source == 'In Paris , in October 1560 , he met " the English ambassador .'


def test_it_parses_jsonl_with_extra_fields_into_metadata():
    data = jsonl(
        {"id": 7, "source": " A. ", "hypothesis": "B.", "label": True, "corpus": "web", "system": "gpt"},
        {"source": "C.", "hypothesis": "D.", "label": None, "metadata": {"split": "dev"}},
    )

    rows = parse_corpus(data, filename="pairs.jsonl", default_corpus="mine")

    assert rows == [
        PairRow("7", "web", "A.", "B.", 1, {"system": "gpt"}),
        PairRow(None, "mine", "C.", "D.", None, {"split": "dev"}),
    ]


def test_it_parses_csv_with_quoted_fields_and_metadata_columns():
    data = (
        b"id,source,hypothesis,label,system,split\r\n"
        b'a1,"Hello, world.","She said ""hi""\nthen left.",Paraphrase,gpt,dev\r\n'
        b"a2,Second.,Deuxieme.,NO,,test\r\n"
    )

    rows = parse_corpus(data, filename="pairs.csv")

    assert rows == [
        PairRow("a1", "", "Hello, world.", 'She said "hi"\nthen left.', 1, {"system": "gpt", "split": "dev"}),
        PairRow("a2", "", "Second.", "Deuxieme.", 0, {"system": "", "split": "test"}),
    ]
    assert [row.location for row in rows] == ["line 2", "line 4"]


def test_it_parses_tsv_with_literal_quotes():
    data = b'source\thypothesis\tcorpus\n"Quoted\tend"\tmine\n'

    assert parse_corpus(data) == [PairRow(None, "mine", '"Quoted', 'end"', None)]


def test_it_reads_an_exported_pairs_csv_header():
    data = b"pair_id,corpus,source,hypothesis,gold_label,n_judgments\nx,c,S.,H.,1,3\ny,c,S2.,H2.,,0\n"

    rows = parse_corpus(data, filename="export.csv")

    assert [(row.external_id, row.gold_label, row.metadata) for row in rows] == [
        ("x", 1, {"n_judgments": "3"}),
        ("y", None, {"n_judgments": "0"}),
    ]


@pytest.mark.parametrize(
    "label, expected",
    [
        ("1", 1), ("0", 0), ("yes", 1), ("No", 0), ("TRUE", 1), ("false", 0),
        ("paraphrase", 1), ("Non-Paraphrase", 0), ("", None), ("  ", None),
    ],
)  # fmt: skip
def test_it_reads_gold_labels(label, expected):
    data = f"source,hypothesis,label\nA.,B.,{label}\n".encode()

    assert parse_corpus(data)[0].gold_label == expected


@pytest.mark.parametrize(
    "first_line, filename, expected",
    [
        ("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String", "msr_paraphrase_train.txt", "mrpc"),
        ("id\tsentence1\tsentence2\tlabel", "train.tsv", "paws"),
        ('{"source": "a", "hypothesis": "b"}', "", "jsonl"),
        ('{"source": "a", "hypothesis": "b"}', "pairs.JSONL", "jsonl"),
        ("source\thypothesis", "", "tsv"),
        ("source\thypothesis", "pairs.tsv", "tsv"),
        ("source,hypothesis", "", "csv"),
        ("source;hypothesis", "pairs.csv", "csv"),
    ],
)
def test_it_detects_the_format(first_line, filename, expected):
    assert detect_format(first_line + "\n", filename) == expected


def test_it_imports_a_file_in_one_go(campaign):
    result = import_pairs(campaign, MRPC)

    assert (result.count, result.corpora) == (2, ["MRPC"])
    assert list(campaign.pairs.values_list("external_id", "corpus", "gold_label")) == [
        ("702876-702977", "MRPC", 1),
        ("2108705-2108831", "MRPC", 0),
    ]


def test_it_names_the_corpus_of_rows_without_one(campaign):
    data = b"source,hypothesis,corpus\nA.,B.,\nC.,D.,theirs\n"

    result = import_pairs(campaign, data, corpus="mine")

    assert result.corpora == ["mine", "theirs"]
    assert list(campaign.pairs.values_list("corpus", flat=True)) == ["mine", "theirs"]


def test_it_overrides_the_default_corpus_of_mrpc(campaign):
    import_pairs(campaign, MRPC, corpus="MRPC-test")

    assert set(campaign.pairs.values_list("corpus", flat=True)) == {"MRPC-test"}


def test_it_generates_ids_after_existing_ones_without_collisions(campaign):
    import_pairs(campaign, b"id,source,hypothesis\n1,A.,B.\n3,C.,D.\n")

    import_pairs(campaign, b"id,source,hypothesis\n,E.,F.\n5,G.,H.\n,I.,J.\n,K.,L.\n")

    assert list(campaign.pairs.values_list("external_id", "source")) == [
        ("1", "A."), ("3", "C."), ("4", "E."), ("5", "G."), ("6", "I."), ("7", "K."),
    ]  # fmt: skip


CAT = "The cat sleeps on the old sofa in the living room."
REWORDED = "A cat is asleep on the old couch in the lounge."  # BLEU inside ParaTag's (5, 20)


def test_it_returns_the_rows_a_filter_left_out_with_their_lines_in_the_file(campaign):
    copy = {"id": "copy", "source": CAT, "hypothesis": CAT}
    data = jsonl({"source": CAT, "hypothesis": REWORDED}) + b"\n" + jsonl(copy)

    result = import_pairs(campaign, data, bleu_range=(5, 20))

    assert result.count == 1 and len(result.rejected) == 1
    assert result.rejected[0].location == "line 3"  # the blank line 2 counts: the file's own numbering
    assert str(result.rejected[0]).startswith("line 3: BLEU 100.0 is not below 20")
    assert list(campaign.pairs.values_list("source", "hypothesis")) == [(CAT, REWORDED)]


def test_a_clash_writes_again_from_the_start_and_reports_each_rejection_once(campaign, monkeypatch):
    """Row 1 gets 1 and its chunk is written; row 4 names 1: the first write is rolled back, not patched."""
    monkeypatch.setattr(readers, "IMPORT_CHUNK_ROWS", 2)
    rows = [
        {"source": CAT, "hypothesis": REWORDED},
        {"source": CAT, "hypothesis": CAT},  # left out by the filter
        {"source": CAT, "hypothesis": REWORDED + " Twice."},
        {"id": "1", "source": CAT, "hypothesis": REWORDED + " Named."},
    ]
    with CaptureQueriesContext(connection) as queries:
        result = import_pairs(campaign, jsonl(*rows), bleu_range=(5, 20))

    assert result.rejected == (RejectedRow("line 2", result.rejected[0].reason),)
    assert result.count == 3 and campaign.pairs.count() == 3
    ids = dict(campaign.pairs.values_list("hypothesis", "external_id"))
    assert ids == {REWORDED: "2", REWORDED + " Twice.": "3", REWORDED + " Named.": "1"}
    assert not [query for query in queries if query["sql"].lstrip().upper().startswith("UPDATE")]


def test_a_bad_line_after_a_clash_still_imports_nothing(campaign, monkeypatch):
    monkeypatch.setattr(readers, "IMPORT_CHUNK_ROWS", 2)
    data = b"id,source,hypothesis\n,A.,a.\n,B.,b.\n1,C.,c.\n,D.,d.\n,E.\n"

    with pytest.raises(CorpusImportError, match="line 6: expected 3 comma-separated fields, found 2"):
        import_pairs(campaign, data)

    assert not campaign.pairs.exists()


def test_it_ignores_training_pairs_when_generating_ids(campaign):
    campaign.ensure_training_pairs()

    import_pairs(campaign, b"source,hypothesis\nA.,B.\n")

    assert campaign.real_pairs.get().external_id == "1"


def test_it_imports_rows_given_as_dicts(campaign):
    result = import_rows(
        campaign,
        [
            {"id": "r1", "source": "A.", "hypothesis": "B.", "label": 1, "metadata": {"note": "x"}},
            {"external_id": "r2", "source": "C.", "hypothesis": "D.", "gold_label": "no"},
        ],
        corpus="api",
    )

    assert result.count == 2
    assert list(campaign.pairs.values_list("external_id", "corpus", "gold_label", "metadata")) == [
        ("r1", "api", 1, {"note": "x"}),
        ("r2", "api", 0, {}),
    ]


def test_it_rejects_bad_rows_given_as_dicts(campaign):
    with pytest.raises(CorpusImportError, match=r"row 2: empty hypothesis"):
        import_rows(campaign, [{"source": "A.", "hypothesis": "B."}, {"source": "C.", "hypothesis": " "}])

    assert Pair.objects.count() == 0


BAD_FILES = [
    # (data, format, filename, message)
    (b"", "auto", "", "the file is empty"),
    (b"\n \n", "auto", "", "the file is empty"),
    (b"source,hypothesis\n", "auto", "", "the file holds no pairs"),
    (b"source,label\nA.,1\n", "auto", "", "line 1: missing column 'hypothesis'"),
    (b"id\tsource\nx\tA.\n", "auto", "", "line 1: missing column 'hypothesis'"),
    (jsonl({"source": "A.", "hypothesis": "B."}, {"source": "C."}), "auto", "", "line 2: missing field 'hypothesis'"),
    (b"source,hypothesis\nA.,B.\n  ,D.\n", "auto", "", "line 3: empty source"),
    (b"source\thypothesis\nA.\t \t\n", "auto", "", "line 2: expected 2 tab-separated fields, found 3"),
    (b"source\thypothesis\nA.\tB.\nC.\t\n", "auto", "", "line 3: empty hypothesis"),
    (b"source,hypothesis\nA.,B.\ncaf\xe9,D.\n", "auto", "", "line 3: the file is not UTF-8 (byte 0xe9 at offset 27)"),
    (b"id,source,hypothesis\n1,A.,B.\n1,E.,F.\n", "auto", "", "line 3: id '1' is used twice (first on line 2)"),
    (b"source,hypothesis,label\nA.,B.,2\n", "auto", "", 'line 2: bad label "2"'),
    (jsonl({"source": "A.", "hypothesis": "B.", "label": 0.5}), "auto", "", "line 1: bad label 0.5"),
    (b'{"source": "A.", "hypothesis": "B."}\n{"source": "C.",\n', "auto", "", "line 2: malformed JSON"),
    (b'["A.", "B."]\n', "jsonl", "", "line 1: expected an object"),
    (jsonl({"source": ["A."], "hypothesis": "B."}), "auto", "", 'line 1: the source must be text, got ["A."]'),
    (b"source,hypothesis\nA.,B.\nC.,D.,E.\n", "auto", "", "line 3: expected 2 comma-separated fields, found 3"),
    (b'source,hypothesis\n"A.,B.\n', "auto", "", "malformed CSV"),
    (MRPC + b"1\t1\t2\tOnly three fields\r\n", "auto", "", "line 4: expected 5 tab-separated fields, found 4"),
    (MRPC.replace(b"\n0\t2108705", b"\nmaybe\t2108705"), "auto", "", 'line 3: bad label "maybe"'),
    (PAWS.replace(b"\t0\n", b"\t\n") + b"3\tA.\n", "auto", "", "line 4: expected 4 tab-separated fields, found 2"),
    (b"source\thypothesis\nA.\tB.\n", "mrpc", "", "line 1: not a MRPC header"),
    (b"source,hypothesis,id,ID\nA.,B.,1,2\n", "auto", "", "line 1: columns 'id' and 'ID' both give the id"),
    (b"source,hypothesis,source\nA.,B.,C.\n", "auto", "", "line 1: the header names the column 'source' twice"),
    (b"source,hypothesis,corpus\nA.,B.," + b"c" * 101 + b"\n", "auto", "", "line 2: corpus name longer than 100"),
    (b"id,source,hypothesis\n" + b"i" * 201 + b",A.,B.\n", "auto", "", "line 2: id longer than 200"),
]


@pytest.mark.parametrize("data, format, filename, message", BAD_FILES)
def test_it_rejects_a_bad_file_and_imports_nothing(campaign, data, format, filename, message):
    with pytest.raises(CorpusImportError) as raised:
        import_pairs(campaign, data, format=format, filename=filename)

    assert message in str(raised.value)
    assert Pair.objects.count() == 0


def test_it_rejects_a_file_over_the_size_limit(campaign, settings):
    data = b"source,hypothesis\nA.,B.\n"
    settings.PARASOL_IMPORT_MAX_BYTES = len(data) - 1

    with pytest.raises(CorpusImportError, match=rf"larger than the limit of {len(data) - 1} bytes"):
        import_pairs(campaign, data)

    assert Pair.objects.count() == 0


@pytest.mark.parametrize(
    "data, message",
    [
        (b"source,hypothesis\nA.,B.\nC.,D.\nE.,F.\n", "line 4: more than 2 pairs"),
        (b"source\thypothesis\nA.\tB.\nC.\tD.\n\nE.\tF.\n", "line 5: more than 2 pairs"),
        (jsonl(*({"source": "A.", "hypothesis": "B."} for _ in range(3))), "line 3: more than 2 pairs"),
    ],
)
def test_it_rejects_a_file_over_the_row_limit(campaign, settings, data, message):
    settings.PARASOL_IMPORT_MAX_ROWS = 2

    with pytest.raises(CorpusImportError, match=message):
        import_pairs(campaign, data)

    assert Pair.objects.count() == 0


def test_it_rejects_ids_already_in_the_campaign_and_imports_nothing(campaign):
    import_pairs(campaign, b"id,source,hypothesis\nx,A.,B.\n")

    with pytest.raises(CorpusImportError, match=r"line 3: id 'x' already exists in campaign 'demo'"):
        import_pairs(campaign, b"id,source,hypothesis\ny,C.,D.\nx,E.,F.\n")

    assert list(campaign.pairs.values_list("external_id", flat=True)) == ["x"]
