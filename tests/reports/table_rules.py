"""What every report table a reader sees must satisfy, on the page, in print and in LaTeX, for every task type.

Shared by the page and LaTeX tests (tests/reports) and the Chromium tests (tests/system).
"""

import re

from annotation.tasktypes.similarity.scale import ANSWERS
from metrics.registry import METRICS
from reports.analysis.agreement import STATISTIC_TITLES
from reports.analysis.vocabulary import COLUMN_TITLES

# The smallest type a table may be printed in, in points (LaTeX and the page's print style alike).
MIN_POINTS = 8
# A registry's names, which only the CSVs (for scripts) may carry.
REGISTRY_NAMES = {*METRICS, *ANSWERS, *STATISTIC_TITLES, *(name for name in COLUMN_TITLES if "_" in name)}
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
# A tokenizer's ids, as a ParaPLUIE signature records its answer setting ("Yes/No:10539/5230").
TOKEN_IDS = re.compile(r":\s*\d+/\d+|\b\d{3,}/\d{3,}\b")
# Words that say nothing of what a sentence is about (a caption restating its title shares the others).
STOP_WORDS = {"the", "and", "its", "each", "with", "of", "a", "an", "in", "on", "to", "by", "at", "for", "as", "or"}


def leaked_names(text) -> set[str]:
    """Registry names, snake_case names and token ids in `text` (a cell, a header, a caption)."""
    names = {*REGISTRY_NAMES, *METRICS}  # the metrics registered now (a test's toy too)
    found = {name for name in names if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text)}
    return found | set(SNAKE_CASE.findall(text)) | set(TOKEN_IDS.findall(text))


def _words(sentence) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9%]+", sentence.lower()) if w not in STOP_WORDS and len(w) > 1}


def sentences(text) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text.strip()) if s.strip()]


def repeats(first, second) -> bool:
    """Whether two sentences say the same thing: most of the shorter one's words are in the other."""
    a, b = _words(first), _words(second)
    shorter = min(a, b, key=len)
    return len(shorter) >= 3 and len(a & b) >= 0.6 * len(shorter)


def caption_problems(caption, title="") -> list[str]:
    """What is wrong with a table's caption: a number of its own, a sentence said twice or restating the title."""
    problems = []
    if re.match(r"\s*Table\s+\d", caption) or re.search(r"Table \d+ —", caption):
        problems.append(f"numbered: {caption[:60]!r}")
    said = sentences(caption)
    for i, sentence in enumerate(said):
        problems += [f"said twice: {sentence!r} / {other!r}" for other in said[i + 1 :] if repeats(sentence, other)]
        if title and repeats(sentence, title):
            problems.append(f"restates the title {title!r}: {sentence!r}")
    return problems
