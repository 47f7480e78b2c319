"""Large corpora stream through the importer: bounded memory, one transaction, a row limit set by setting."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaigns.importers import CorpusImportError, import_pairs, iter_corpus, readers
from campaigns.models import Campaign, Pair


def csv_file(n, last=None):
    lines = [f"{i},Source sentence number {i} is here.,Hypothesis number {i} is there.\n" for i in range(1, n + 1)]
    if last is not None:
        lines[-1] = last
    return ("id,source,hypothesis\n" + "".join(lines)).encode()


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(readers, "IMPORT_CHUNK_ROWS", 3)


def test_the_row_limit_comes_from_the_setting(campaign, settings):
    settings.PARASOL_IMPORT_MAX_ROWS = 5
    with pytest.raises(CorpusImportError, match="line 7: more than 5 pairs, the limit"):
        import_pairs(campaign, csv_file(6))
    assert not campaign.pairs.exists()
    settings.PARASOL_IMPORT_MAX_ROWS = 6
    assert import_pairs(campaign, csv_file(6)).count == 6


def test_an_error_on_the_last_line_imports_nothing_though_chunks_were_written(campaign, small_chunks):
    seen_in_database = []
    data = csv_file(20, last="20,Only a source\n")

    def progress(bytes_read):
        seen_in_database.append(Pair.objects.filter(campaign=campaign).count())

    with pytest.raises(CorpusImportError, match="line 21: expected 3 comma-separated fields, found 2"):
        import_pairs(campaign, data, progress=progress)
    assert max(seen_in_database) > 0, "no chunk was written before the error: nothing was tested"
    assert not campaign.pairs.exists()


def test_rows_are_written_while_the_file_is_still_being_read(campaign, small_chunks, monkeypatch, tmp_path):
    monkeypatch.setattr(readers, "IMPORT_CHUNK_ROWS", 4)
    path = tmp_path / "pairs.csv"
    path.write_bytes(csv_file(40))
    stored_while_reading = []
    with open(path, "rb") as handle:
        import_pairs(
            campaign,
            handle,
            progress=lambda _bytes: stored_while_reading.append(Pair.objects.filter(campaign=campaign).count()),
        )
    assert campaign.real_pairs.count() == 40
    # Each chunk reaches the database before the next lines are read, not after the whole file.
    assert 0 < stored_while_reading[1] < 40
    assert stored_while_reading == sorted(stored_while_reading)


def test_the_parser_reads_the_file_lazily(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_bytes(csv_file(5000))
    with open(path, "rb") as handle:
        rows = iter_corpus(handle)
        first = next(rows)
        read_so_far = handle.tell()
        rest = sum(1 for _ in rows)
    assert first.external_id == "1" and rest == 4999
    assert read_so_far < path.stat().st_size / 10


def test_a_number_a_later_row_names_is_skipped_and_no_stored_row_is_renumbered(campaign, small_chunks):
    # B got 2 and its chunk was written before D named 2: the write starts again, numbering around 2.
    data = b"id,source,hypothesis\n,A.,a.\n,B.,b.\n,C.,c.\n,E.,e.\n2,D.,d.\n,F.,f.\n"
    with CaptureQueriesContext(connection) as queries:
        result = import_pairs(campaign, data)
    ids = dict(campaign.pairs.values_list("source", "external_id"))
    assert ids == {"A.": "1", "B.": "3", "C.": "4", "E.": "5", "D.": "2", "F.": "6"}
    assert result.count == 6 and campaign.pairs.count() == 6
    assert not [query for query in queries if query["sql"].lstrip().upper().startswith("UPDATE")]


def test_bad_utf8_names_its_line_and_offset(campaign):
    data = b"source,hypothesis\nA.,B.\nC.,\xff.\n"
    with pytest.raises(CorpusImportError, match=r"line 3: the file is not UTF-8 \(byte 0xff at offset 27\)"):
        import_pairs(campaign, io.BytesIO(data))


def test_the_command_streams_the_file_with_a_progress_bar(campaign, tmp_path, settings):
    path = tmp_path / "pairs.csv"
    path.write_bytes(csv_file(30))
    err = io.StringIO()
    call_command("import_pairs", campaign.slug, str(path), stdout=io.StringIO(), stderr=err)
    assert campaign.real_pairs.count() == 30
    assert "reading" in err.getvalue() and "MiB" in err.getvalue()
    settings.PARASOL_IMPORT_MAX_ROWS = 10
    with pytest.raises(CommandError, match="more than 10 pairs.*Nothing was imported"):
        call_command("import_pairs", "fresh", str(path), "--create", stdout=io.StringIO(), stderr=io.StringIO())
    assert not Pair.objects.filter(campaign__slug="fresh").exists()


def test_debugs_query_log_does_not_grow_with_the_corpus(campaign, small_chunks, settings):
    """With DEBUG on (workstation, demo), the query log keeps one chunk's statements, not the corpus's."""
    from django.db import connection, reset_queries

    settings.DEBUG = True
    reset_queries()
    import_pairs(campaign, csv_file(30))
    per_import_of_30 = len(connection.queries)
    larger = Campaign.objects.create(slug="larger", name="Larger", created_by=campaign.created_by)
    reset_queries()
    import_pairs(larger, csv_file(300))
    assert len(connection.queries) <= per_import_of_30, "the log grew with the number of rows"
    assert larger.real_pairs.count() == 300
