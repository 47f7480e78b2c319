"""What a server sends, made safe where it enters: a table of inputs and what comes out."""

import math

import numpy as np
import pytest

from metrics.untrusted import UntrustedAnswer, clean_json, clean_text, finite, parse_json


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("plain words", 100, "plain words"),
        ("tab\tand\nlines\r\n", 100, "tab\tand\nlines\r\n"),
        ("nul\x00here", 100, "nul\ufffdhere"),
        ("lone \ud800 and \udfff", 100, "lone \ufffd and \ufffd"),
        ("escape \x1b[31m bell \x07 c1 \x85", 100, "escape \ufffd[31m bell \ufffd c1 \ufffd"),
        ("é 中文 😀", 100, "é 中文 😀"),
        ("abcdefghij", 5, "abcd…"),
    ],
)
def test_it_cleans_and_cuts_text(text, limit, expected):
    assert clean_text(text, limit) == expected
    expected.encode("utf-8")  # whatever comes out can be written


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b'{"a": NaN}', "NaN"),
        (b'{"a": Infinity}', "Infinity"),
        (b'{"a": -Infinity}', "-Infinity"),
        (b'{"a": 1e999}', "out of range"),
        (b'{"a": -1e999}', "out of range"),
        (b'{"a": 1', "not valid JSON"),
        (b"\xff\xfe{", "not valid JSON"),
        (b'{"a": ' + b"1" * 5000 + b"}", "not valid JSON"),
    ],
)
def test_it_refuses_json_that_is_not_strict(raw, problem):
    with pytest.raises(UntrustedAnswer, match=problem):
        parse_json(raw)


def test_it_reads_strict_json():
    assert parse_json(b'{"a": [-0.5, 1e308, "x\\u0000"]}') == {"a": [-0.5, 1e308, "x\x00"]}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float32("nan"), "x", None, [1]])
def test_only_finite_numbers_pass(value):
    with pytest.raises(UntrustedAnswer):
        finite(value)


def test_details_are_cleaned_and_checked_all_the_way_down():
    assert clean_json({"a\x00": ["x\ud800", np.int64(3), np.float64(0.5), True, None]}, 100) == {
        "a\ufffd": ["x\ufffd", 3, 0.5, True, None]
    }
    with pytest.raises(UntrustedAnswer, match="details"):
        clean_json({"answers": [{"p": math.inf}]}, 100)
