from metrics.base import format_signature, parse_signature


def test_a_signature_line_reads_back_with_colons_inside_values():
    fields = {"metric": "parapluie_direct", "version": "1", "answer": "Yes/No:10539/5230", "model": "C:/models/x"}
    line = format_signature(fields)
    assert line == "metric:parapluie_direct|version:1|answer:Yes/No:10539/5230|model:C:/models/x"
    assert parse_signature(line) == fields
