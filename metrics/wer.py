"""WER: word error rate of the hypothesis against the source (the draft's WER row), from jiwer.

Edits (substitutions, deletions, insertions of whole words) over the number of source
words, with jiwer's default transform: surrounding and repeated spaces removed, words
split on whitespace, case and punctuation kept. Per pair, not pooled over a corpus.
"""

from importlib.metadata import version

import jiwer

from metrics.base import Metric


def word_edits(source, hypothesis):
    """(substitutions, deletions, insertions, source words): the statistics one WER is made of."""
    alignment = jiwer.process_words(source, hypothesis)
    n_source = alignment.hits + alignment.substitutions + alignment.deletions
    return alignment.substitutions, alignment.deletions, alignment.insertions, n_source


def word_error_rate(source, hypothesis):
    """(S + D + I) / N; can exceed 1 when the hypothesis is longer. jiwer's value, kept as it is."""
    return jiwer.process_words(source, hypothesis).wer


class WordErrorRate(Metric):
    name = "wer"

    def _score_pair(self, source, hypothesis):
        return word_error_rate(source, hypothesis)

    def _signature_fields(self):
        return {"impl": f"jiwer-{version('jiwer')}", "tok": "whitespace", "case": "kept", "ref": "source"}
