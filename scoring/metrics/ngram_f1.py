"""NGRAM_F1: PEM's target-language F1, the overlap of the 1- to 4-gram bags of source and hypothesis.

PEM (Liu et al., section 4.4) measures lexical dissimilarity with the F1 agreement of the bags
of all N-grams up to 4-grams of the two English sentences; precision and recall are the summed
minimum counts over the hypothesis's and the source's bag sizes. Higher means more overlap,
that is a *less* dissimilar hypothesis. Words come from nltk's Treebank tokenizer, lower-cased.
"""

from importlib.metadata import version

from nltk.tokenize import TreebankWordTokenizer

from scoring.metrics.base import Metric
from scoring.metrics.bleu import ngram_counts

MAX_ORDER = 4
_tokenizer = TreebankWordTokenizer()


def ngram_bag(tokens, max_order=MAX_ORDER):
    """Every n-gram of 1 to `max_order` words, with its count."""
    return ngram_counts(tokens, max_order)


def bag_f1(source_bag, hypothesis_bag):
    """F1 of two bags: shared mass over each bag's size; 1 for two empty bags, 0 when one is empty."""
    if not source_bag and not hypothesis_bag:
        return 1.0
    shared = sum((source_bag & hypothesis_bag).values())
    if shared == 0:
        return 0.0
    precision = shared / sum(hypothesis_bag.values())
    recall = shared / sum(source_bag.values())
    return 2 * precision * recall / (precision + recall)


def words(text):
    return _tokenizer.tokenize(text.lower())


class NgramF1(Metric):
    name = "ngram_f1"

    def _score_pair(self, source, hypothesis):
        return bag_f1(ngram_bag(words(source)), ngram_bag(words(hypothesis)))

    def _signature_fields(self):
        return {"tok": f"treebank-nltk-{version('nltk')}", "case": "lc", "order": f"1-{MAX_ORDER}"}
