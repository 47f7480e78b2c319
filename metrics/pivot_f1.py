"""PIVOT_F1: PEM's pivot-language F1 (Liu et al., 2010, sections 4.1-4.3 and 6.1), from a Moses phrase table.

Each sentence is segmented into the English phrases of the table that maximise the product of
Pr(p) = N(p) / sum N(p') (equation 2; any single word is a phrase, N = 0.5 when unknown); each
phrase's pivot translations (edges above `min_edge`, 0.1 in section 6.1; an unknown word is its
own translation, probability 1) are joined in parallel, the segments in series: a confusion
network. Its pivot 1- to 4-grams, weighted by their expected count over the network's paths and
kept above `min_ngram` (0.01), are the sentence's bag of pivot n-grams; the score is the F1 of
the two bags with min-weights (section 4.3). The table is the researcher's, named by
PARASOL_PEM_PHRASE_TABLE; without it the metric is unavailable.
"""

import gzip
import hashlib
import math
import os
from collections import defaultdict
from functools import lru_cache
from importlib.metadata import version

from metrics.base import Metric, MetricUnavailable, setting
from metrics.ngram_f1 import STEMS, bag_f1, words

TABLE_SETTING = "PARASOL_PEM_PHRASE_TABLE"
SIDE_SETTING = "PARASOL_PEM_ENGLISH_SIDE"
MAX_ORDER = 4  # pivot n-grams up to 4 (sections 4.3, 6.1)
MIN_EDGE = 0.1  # section 6.1: edges of the confusion network with probabilities higher than 0.1
MIN_NGRAM = 0.01  # section 6.1: n-grams with probabilities higher than 0.01
UNKNOWN_COUNT = 0.5  # section 4.2: N(w) = 0.5 for a word the table does not know
# Moses scores: phi(f|e) lex(f|e) phi(e|f) lex(e|f); counts: target, source, pair. For the English
# side, (index of Pr(pivot | English) among the scores, index of N(English) among the counts).
SIDES = {"target": (0, 0), "source": (2, 1)}


class PhraseTable:
    """English phrase -> (count N, [(pivot phrase, Pr(pivot | English)), ...]), with the total of the counts."""

    def __init__(self, entries, total):
        self.entries = entries
        self.total = total
        self.longest = max((len(phrase) for phrase in entries), default=1)

    def log_pr(self, phrase):
        """log Pr(p) of equation 1, or None for a multi-word phrase the table lacks."""
        entry = self.entries.get(phrase)
        if entry is not None and entry[0] > 0:
            return math.log(entry[0] / self.total)
        return math.log(UNKNOWN_COUNT / self.total) if len(phrase) == 1 else None

    def translations(self, phrase):
        """The pivot edges of a segment: the table's, or the unknown word itself with probability 1."""
        entry = self.entries.get(phrase)
        if entry is not None and entry[1]:
            return entry[1]
        return [(phrase, 1.0)] if entry is None else []


def read_phrase_table(path, english_side="target", min_edge=MIN_EDGE) -> PhraseTable:
    """Parse a Moses text phrase table (`src ||| tgt ||| scores ||| alignment ||| counts`, .gz allowed).

    Errors name the line. Edges with Pr(pivot | English) <= `min_edge` are dropped here.
    """
    probability_at, count_at = SIDES[english_side]
    counts, edges = {}, defaultdict(list)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            fields = [field.strip() for field in line.split("|||")]
            if len(fields) < 5:
                raise MetricUnavailable(
                    f"{path}, line {number}: a Moses phrase table line needs 5 fields "
                    "(source ||| target ||| scores ||| alignment ||| counts); PEM's Pr(p) needs the counts"
                )
            source, target, scores, counts_field = fields[0], fields[1], fields[2].split(), fields[4].split()
            try:
                probability = float(scores[probability_at])
                count = float(counts_field[count_at])
            except (IndexError, ValueError):
                raise MetricUnavailable(f"{path}, line {number}: scores or counts are not numbers") from None
            english, pivot = (target, source) if english_side == "target" else (source, target)
            english = tuple(english.split())
            counts[english] = max(counts.get(english, 0.0), count)
            if probability > min_edge:
                edges[english].append((tuple(pivot.split()), probability))
    entries = {phrase: (count, edges.get(phrase, [])) for phrase, count in counts.items()}
    return PhraseTable(entries, sum(counts.values()) or 1.0)


@lru_cache(maxsize=2)
def _cached_table(path, english_side, min_edge, stamp):
    return read_phrase_table(path, english_side, min_edge)


@lru_cache(maxsize=8)
def _file_sha256(path, stamp):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def segment(tokens, table: PhraseTable):
    """The most probable segmentation (equation 2) by dynamic programming: a list of word tuples."""
    best = [0.0] + [-math.inf] * len(tokens)
    back = [0] * (len(tokens) + 1)
    for end in range(1, len(tokens) + 1):
        for start in range(max(0, end - table.longest), end):
            log_pr = table.log_pr(tuple(tokens[start:end]))
            if log_pr is not None and best[start] + log_pr > best[end]:
                best[end], back[end] = best[start] + log_pr, start
    segments, end = [], len(tokens)
    while end > 0:
        segments.append(tuple(tokens[back[end] : end]))
        end = back[end]
    return segments[::-1]


def confusion_network(segments, table: PhraseTable):
    """Per segment, its pivot edges [(pivot words, probability), ...].

    A known phrase whose every edge was pruned keeps an empty slot: no n-gram runs across it.
    """
    return [[(pivot, p) for pivot, p in table.translations(phrase) if pivot] for phrase in segments]


def pivot_ngrams(network, max_order=MAX_ORDER, min_ngram=MIN_NGRAM) -> dict:
    """Bag of pivot n-grams: each n-gram's expected count over the network's paths, kept above `min_ngram`.

    An occurrence starts inside one edge and runs on through the edges of the following
    segments; its weight is the product of the probabilities of the edges it reads. Partial
    n-grams that reach a segment's end are summed by their words before going on (the
    weights are linear in each edge), which keeps the work per segment small.
    """
    bag = defaultdict(float)
    frontier = {}  # partial n-grams that reached the end of the previous segment -> summed weight
    for edges in network:
        reaching = defaultdict(float)
        for pivot, probability in edges:
            starts = [(partial, weight * probability, 0) for partial, weight in frontier.items()]
            starts += [((), probability, offset) for offset in range(len(pivot))]
            for gram, weight, offset in starts:
                for word in pivot[offset:]:
                    gram = (*gram, word)
                    bag[gram] += weight
                    if len(gram) == max_order:
                        break
                else:
                    reaching[gram] += weight
        frontier = reaching
    return {ngram: weight for ngram, weight in bag.items() if weight > min_ngram}


def bpng(text, table, *, stem="porter", min_ngram=MIN_NGRAM):
    """A sentence's bag of pivot-language n-grams (section 4.3)."""
    return pivot_ngrams(confusion_network(segment(words(text, stem), table), table), min_ngram=min_ngram)


class PivotF1(Metric):
    name = "pivot_f1"

    def __init__(self, *, phrase_table=None, english_side=None, stem=None, min_edge=None, min_ngram=None):
        path = setting(TABLE_SETTING, None, value=phrase_table)
        if not path:
            raise MetricUnavailable(
                f"pivot_f1 needs a phrase table: set {TABLE_SETTING} to a Moses text phrase table "
                "(pivot ||| English ||| scores ||| alignment ||| counts, .gz allowed) built from your parallel text"
            )
        if not os.path.isfile(path):
            raise MetricUnavailable(f"{TABLE_SETTING} names {path}, which is not a readable file")
        self.path = str(path)
        self.english_side = setting(SIDE_SETTING, "target", choices=set(SIDES), value=english_side)
        self.stem = setting("PARASOL_PEM_STEM", "porter", choices=set(STEMS), value=stem)
        self.min_edge = float(MIN_EDGE if min_edge is None else min_edge)
        self.min_ngram = float(MIN_NGRAM if min_ngram is None else min_ngram)
        stat = os.stat(self.path)
        stamp = (stat.st_mtime_ns, stat.st_size)
        self.table = _cached_table(self.path, self.english_side, self.min_edge, stamp)
        self.table_sha256 = _file_sha256(self.path, stamp)

    def _score_batch(self, sources, hypotheses):
        # A source is usually paraphrased several times: each distinct sentence's bag is built once.
        bags = {
            text: bpng(text, self.table, stem=self.stem, min_ngram=self.min_ngram) for text in {*sources, *hypotheses}
        }
        return [bag_f1(bags[source], bags[hypothesis]) for source, hypothesis in zip(sources, hypotheses)]

    def _signature_fields(self):
        return {
            "table": f"sha256-{self.table_sha256[:16]}",
            "english": self.english_side,
            "stem": f"porter-nltk-{version('nltk')}" if self.stem == "porter" else "none+lc",
            "tok": "treebank",
            "edge": f">{self.min_edge:g}",
            "ngram": f">{self.min_ngram:g}",
            "order": f"1-{MAX_ORDER}",
        }
