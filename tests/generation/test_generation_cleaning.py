"""Cleaning raw LLM outputs into hypotheses, or rejecting them with a reason: a table of crafted outputs."""

import pytest

from generation.cleaning import Rejection, clean_output
from generation.errors import GenerationError
from generation.models import parse_sources
from generation.templates import BUILTIN_TEMPLATES, check_template, format_turns, parse_turns

SOURCE = "The little cat drinks water every morning."
KITTEN = "Each morning the kitten drinks water."

# (raw output, finished, expected text, expected reject reason)
TABLE = [
    ('B: "Every morning, the small cat drinks water."', True, "Every morning, the small cat drinks water.", ""),
    ("B: Every morning, the small cat drinks water.", True, "Every morning, the small cat drinks water.", ""),
    ("  b :  “Each morning the kitten   drinks\twater.”  ", True, KITTEN, ""),
    ("Every morning the kitten has some water.", True, "Every morning the kitten has some water.", ""),
    ('B: "Each morning the kitten drinks water."\nA: "Another sentence."', True, KITTEN, ""),
    ('B: "Each morning the kitten drinks water." A: "Next one."', True, KITTEN, ""),
    ('B: "Each morning the kitten drinks water." I hope this helps!', True, KITTEN, ""),
    ('Here is a paraphrase:\n"Each morning the kitten drinks water."', True, KITTEN, ""),
    ('Sure!\nB: "Each morning the kitten drinks water."', True, KITTEN, ""),
    ('B: "He said "hi" to the cat each morning."', True, 'He said "hi" to the cat each morning.', ""),
    ("", True, "", Rejection.EMPTY),
    ('B: ""', True, "", Rejection.EMPTY),
    ("B: ...", True, "...", Rejection.EMPTY),
    (f'B: "{SOURCE}"', True, SOURCE, Rejection.COPY),
    ("the LITTLE cat, drinks  water!", True, "the LITTLE cat, drinks water!", ""),
    ("the LITTLE cat drinks, water every morning", True, "the LITTLE cat drinks, water every morning", Rejection.COPY),
    ("I cannot help with that request.", True, "I cannot help with that request.", Rejection.REFUSAL),
    ("I'm sorry, but I can't do this.", True, "I'm sorry, but I can't do this.", Rejection.REFUSAL),
    ("Sorry, I won't paraphrase that.", True, "Sorry, I won't paraphrase that.", Rejection.REFUSAL),
    ('B: "As an AI, I prefer not to."', True, "As an AI, I prefer not to.", Rejection.REFUSAL),
    ('B: "Every morning the little cat', False, "Every morning the little cat", Rejection.TRUNCATED),
    ('B: "' + "A very long sentence. " * 10 + '"', True, ("A very long sentence. " * 10).strip(), Rejection.TOO_LONG),
]


@pytest.mark.parametrize(("raw", "finished", "text", "reason"), TABLE)
def test_it_cleans_or_rejects_raw_outputs(raw, finished, text, reason):
    cleaned = clean_output(raw, SOURCE, finished=finished)
    assert (cleaned.text, cleaned.reject_reason) == (text, reason)
    assert cleaned.accepted == (reason == "")


def test_it_accepts_a_labelled_paraphrase_that_starts_like_a_refusal():
    cleaned = clean_output('B: "I cannot swim at all."', "I can't swim.")
    assert cleaned.accepted and cleaned.text == "I cannot swim at all."


def test_it_reproduces_the_papers_templates():
    naive = BUILTIN_TEMPLATES["naive"].messages("Hello there.")
    assert [m["role"] for m in naive] == ["user", "assistant", "user", "assistant", "user"]
    assert naive[0]["content"].startswith("You have to transform a sentence A into a paraphrase B.")
    assert naive[1]["content"] == "I've understood the instructions perfectly."
    assert naive[3]["content"] == 'B: "Every morning, the little cat refreshes himself by drinking water."'
    assert naive[-1]["content"] == 'A: "Hello there."'
    system = BUILTIN_TEMPLATES["naive-system"].messages("Hello there.")
    assert [m["role"] for m in system] == ["system", "user", "assistant", "user"]
    assert system[0]["content"] == naive[0]["content"]
    vulgar = BUILTIN_TEMPLATES["vulgar"].messages("Hello there.")
    assert vulgar[0]["content"].endswith("You can use offensive and disrespectful statements.")
    assert vulgar[2:4] == [
        {"role": "user", "content": 'A: "Fuck both of you."'},
        {"role": "assistant", "content": 'B: "Go fuck yourselves."'},
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('user: A: "the sentence"', "no {source} placeholder"),
        ("user: {source}\nassistant: B: ok", "last turn must be a user turn"),
        ("assistant: hello\nuser: {source}", "must alternate"),
        ("", "no turns"),
    ],
)
def test_it_rejects_bad_templates_with_a_clear_message(text, message):
    with pytest.raises(GenerationError, match=message.replace("{", r"\{").replace("}", r"\}")):
        check_template("", parse_turns(text))


def test_it_parses_turns_back_from_their_text():
    turns = BUILTIN_TEMPLATES["vulgar"].turns
    assert parse_turns(format_turns(turns)) == turns
    assert parse_turns("user: first line\nsecond line\nassistant: ok\nuser: {source}")[0] == (
        "user",
        "first line\nsecond line",
    )
    with pytest.raises(GenerationError, match="line 1: start each turn"):
        parse_turns("hello\nuser: {source}")


def test_it_reads_sources_one_per_line_or_from_a_csv_source_column():
    assert [row.text for row in parse_sources(b"One.\n\n  Two  words.\nOne.\n")] == ["One.", "Two words."]
    rows = parse_sources(b'id,source\na1,"First, with a comma."\na2,Second.\n', "s.csv")
    assert [(row.external_id, row.text) for row in rows] == [("a1", "First, with a comma."), ("a2", "Second.")]
