"""BLEU as torchtext's ``bleu_score`` computes it with its defaults, one sentence at a time.

torchtext is unmaintained and absent here, so its ``basic_english`` tokeniser and its
sentence BLEU are reproduced: n-grams up to 4, uniform weights, no smoothing (0 as
soon as one n-gram order has no match), brevity penalty, the source as the single
reference. Statistics per pair are kept apart from the score, as in sacrebleu.
"""

import math
import re
from collections import Counter

from metrics.base import Metric

MAX_ORDER = 4

# torchtext.data.utils._basic_english_normalize, pattern for pattern, in order.
_BASIC_ENGLISH = [
    (re.compile(pattern), replacement)
    for pattern, replacement in [
        (r"\'", " '  "),
        (r"\"", ""),
        (r"\.", " . "),
        (r"<br \/>", " "),
        (r",", " , "),
        (r"\(", " ( "),
        (r"\)", " ) "),
        (r"\!", " ! "),
        (r"\?", " ? "),
        (r"\;", " "),
        (r"\:", " "),
        (r"\s+", " "),
    ]
]


def basic_english(line):
    """torchtext's ``get_tokenizer("basic_english")``: lower-case, split punctuation, split on spaces."""
    line = line.lower()
    for pattern, replacement in _BASIC_ENGLISH:
        line = pattern.sub(replacement, line)
    return line.split()


def ngram_counts(tokens, max_order):
    counts = Counter()
    for order in range(1, max_order + 1):
        counts.update(tuple(tokens[i : i + order]) for i in range(len(tokens) - order + 1))
    return counts


def bleu_statistics(hypothesis_tokens, reference_tokens, max_order=MAX_ORDER):
    """(matches per order, hypothesis n-grams per order, hypothesis length, reference length)."""
    clipped = ngram_counts(hypothesis_tokens, max_order) & ngram_counts(reference_tokens, max_order)
    matches = [0] * max_order
    for ngram, count in clipped.items():
        matches[len(ngram) - 1] += count
    length = len(hypothesis_tokens)
    totals = [max(length - order + 1, 0) for order in range(1, max_order + 1)]
    return matches, totals, length, len(reference_tokens)


def bleu_from_statistics(matches, totals, hypothesis_length, reference_length):
    """Geometric mean of the n-gram precisions (uniform weights) times the brevity penalty."""
    if min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / len(matches)
    brevity_penalty = math.exp(min(1.0 - reference_length / hypothesis_length, 0.0))
    return brevity_penalty * math.exp(log_precision)


class Bleu(Metric):
    name = "bleu"

    def _score_pair(self, source, hypothesis):
        return bleu_from_statistics(*bleu_statistics(basic_english(hypothesis), basic_english(source)))

    def _signature_fields(self):
        return {
            "impl": "torchtext-bleu_score-reimpl",
            "tok": "torchtext-basic_english",
            "order": str(MAX_ORDER),
            "smooth": "none",
            "refs": "source",
        }
