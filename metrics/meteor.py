"""METEOR from nltk's ``meteor_score`` with its defaults, WordNet read offline.

nltk's API takes pre-tokenised lists. The default tokeniser is the Treebank-style
word tokenizer that ``nltk.word_tokenize`` runs inside (``preserve_line=True``: no
punkt sentence model, nothing to download), which splits punctuation from words;
it reproduces the paper's MRPC figures. ``tokenizer="whitespace"`` keeps the old
whitespace split (signature version 1) for anyone comparing with scores made that way.
"""

from importlib.metadata import version

from nltk.tokenize import word_tokenize
from nltk.translate.meteor_score import meteor_score

from metrics.base import Metric
from metrics.wordnet import load_wordnet, nltk_data_dir


def treebank_tokens(text):
    """nltk's Treebank-style word tokens ("dogs." -> "dogs", "."; "can't" -> "ca", "n't")."""
    return word_tokenize(text, preserve_line=True)


def whitespace_tokens(text):
    """Split on whitespace only: punctuation stays glued to its word ("dogs.")."""
    return text.split()


TOKENIZERS = {"treebank": treebank_tokens, "whitespace": whitespace_tokens}


class Meteor(Metric):
    name = "meteor"
    version = "2"  # 2: Treebank tokens by default (1 split on whitespace)

    def __init__(self, *, nltk_data=None, tokenizer="treebank"):
        if tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {sorted(TOKENIZERS)}, got {tokenizer!r}")
        self.tokenizer = tokenizer
        self.tokens = TOKENIZERS[tokenizer]
        self.data_dir = str(nltk_data_dir(nltk_data))
        self.wordnet = load_wordnet(self.data_dir)

    def _score_pair(self, source, hypothesis):
        # alpha=0.9, beta=3, gamma=0.5, Porter stemmer, lower-casing: nltk's defaults.
        return meteor_score([self.tokens(source)], self.tokens(hypothesis), wordnet=self.wordnet)

    def _signature_fields(self):
        return {
            "impl": f"nltk-{version('nltk')}",
            "tok": "nltk-treebank-word_tokenize" if self.tokenizer == "treebank" else "whitespace",
            "case": "lower",
            "wordnet": self.wordnet.get_version(),
            "params": "alpha=0.9,beta=3,gamma=0.5",
        }
