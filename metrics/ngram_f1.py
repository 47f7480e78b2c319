"""NGRAM_F1: PEM's target-language F1, the overlap of the 1- to 4-gram bags of source and hypothesis.

PEM (Liu et al., section 4.4) measures lexical dissimilarity with the F1 agreement of the bags
of all N-grams up to 4-grams of the two English sentences; precision and recall are the summed
minimum counts over the hypothesis's and the source's bag sizes. Higher means more overlap,
that is a *less* dissimilar hypothesis. Words come from nltk's Treebank tokenizer and are
Porter-stemmed as in section 6.1 ("We stem all English words", the default; nltk's stemmer
also lower-cases), or only lower-cased with ``stem="none"`` (its own signature).
"""

from importlib.metadata import version

from nltk.stem import PorterStemmer
from nltk.tokenize import TreebankWordTokenizer

from metrics.base import Metric, setting
from metrics.bleu import ngram_counts

MAX_ORDER = 4
STEMS = ("porter", "none")
_tokenizer = TreebankWordTokenizer()
_stemmer = PorterStemmer()


def ngram_bag(tokens, max_order=MAX_ORDER):
    """Every n-gram of 1 to `max_order` words, with its count."""
    return ngram_counts(tokens, max_order)


def bag_f1(source_bag, hypothesis_bag):
    """F1 of two weighted bags (PEM 4.3): the summed min-weights over each bag's total weight.

    Counts (this metric) and pivot n-gram weights (pivot_f1) alike; 1 for two empty bags, 0 when one is empty.
    """
    if not source_bag and not hypothesis_bag:
        return 1.0
    shared = sum(min(weight, hypothesis_bag.get(gram, 0)) for gram, weight in source_bag.items())
    if shared <= 0:
        return 0.0
    precision = shared / sum(hypothesis_bag.values())
    recall = shared / sum(source_bag.values())
    return 2 * precision * recall / (precision + recall)


def words(text, stem="porter"):
    tokens = _tokenizer.tokenize(text)
    return [_stemmer.stem(token) for token in tokens] if stem == "porter" else [token.lower() for token in tokens]


class NgramF1(Metric):
    name = "ngram_f1"
    version = "2"  # version 1 did not stem: its scores carry no `stem` field and are never mixed with these

    def __init__(self, *, stem=None):
        self.stem = setting("NGRAM_F1_STEM", "porter", choices=set(STEMS), value=stem)

    def _score_pair(self, source, hypothesis):
        return bag_f1(ngram_bag(words(source, self.stem)), ngram_bag(words(hypothesis, self.stem)))

    def _signature_fields(self):
        stem = f"porter-nltk-{version('nltk')}" if self.stem == "porter" else "none"
        return {"tok": f"treebank-nltk-{version('nltk')}", "case": "lc", "stem": stem, "order": f"1-{MAX_ORDER}"}
