"""METEOR from nltk's ``meteor_score`` with its defaults, WordNet read offline."""

from importlib.metadata import version

from nltk.translate.meteor_score import meteor_score

from scoring.metrics.base import Metric
from scoring.metrics.wordnet import load_wordnet, nltk_data_dir


def whitespace_tokens(text):
    """nltk's API wants pre-tokenised lists; nltk < 3.6.6 split raw strings on whitespace itself."""
    return text.split()


class Meteor(Metric):
    name = "meteor"

    def __init__(self, *, nltk_data=None):
        self.data_dir = str(nltk_data_dir(nltk_data))
        self.wordnet = load_wordnet(self.data_dir)

    def _score_pair(self, source, hypothesis):
        # alpha=0.9, beta=3, gamma=0.5, Porter stemmer, lower-casing: nltk's defaults.
        return meteor_score([whitespace_tokens(source)], whitespace_tokens(hypothesis), wordnet=self.wordnet)

    def _signature_fields(self):
        return {
            "impl": f"nltk-{version('nltk')}",
            "tok": "whitespace",
            "case": "lower",
            "wordnet": self.wordnet.get_version(),
            "params": "alpha=0.9,beta=3,gamma=0.5",
        }
