"""The published schema's text patterns say what the server does (issue 48, schemathesis): blank is what the
server trims away, and no pattern lets a NUL through that the server refuses."""

import re

from campaigns.models import DETECTOR_CHOICE_PATTERN
from parasol.api_fields import NO_NUL, NOT_BLANK

# Shorthands that mean other things to Python and to the ECMA regexes of a JSON schema (`\s` lacks \x1c-\x1f
# and \x85 in ECMA; `.` stops at \r there, and both let a NUL through).
AMBIGUOUS = re.compile(r"\\s|\\S|(?<!\\)\.")


def test_blank_in_the_schema_is_blank_for_the_server():
    for point in range(0x3100):
        text = f" {chr(point)} "
        if chr(point) == "\x00":
            continue
        assert bool(NOT_BLANK.regex.search(text)) == (text.strip() != ""), hex(point)


def test_the_published_patterns_use_no_shorthand_that_ecma_reads_otherwise():
    for pattern in (NOT_BLANK.regex.pattern, NO_NUL.regex.pattern, DETECTOR_CHOICE_PATTERN):
        assert not AMBIGUOUS.search(pattern), pattern


def test_a_detector_choice_with_a_nul_is_refused_by_its_pattern():
    assert re.search(DETECTOR_CHOICE_PATTERN, "7/0003-news")
    assert not re.search(DETECTOR_CHOICE_PATTERN, "7/0003\x00news")
