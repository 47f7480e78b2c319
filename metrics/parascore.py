"""Reference-free ParaScore (Shen et al., 2022): BERTScore F1 plus a diversity bonus for edits."""

from metrics.base import Metric
from metrics.bertscore import BertScore
from metrics.lev import normalized_edit_distance

OMEGA = 0.05  # weight of the diversity term
GAMMA = 0.35  # edit distance beyond which diversity earns no more


def diversity(distance, gamma=GAMMA):
    """DS(d): -1 at d=0, rising linearly to gamma at d=gamma, flat after."""
    if distance >= gamma:
        return gamma
    return -1.0 + ((gamma + 1.0) / gamma) * distance


class ParaScore(Metric):
    name = "parascore"

    def __init__(self, *, bertscore=None, **bertscore_options):
        self.bertscore = bertscore or BertScore(**bertscore_options)

    def _score_batch(self, sources, hypotheses):
        similarities = self.bertscore.f1(sources, hypotheses)
        return [
            similarity + OMEGA * diversity(normalized_edit_distance(source, hypothesis))
            for similarity, source, hypothesis in zip(similarities, sources, hypotheses)
        ]

    def _signature_fields(self):
        inner = {key: value for key, value in self.bertscore.signature().items() if key not in {"metric", "version"}}
        return {"omega": str(OMEGA), "gamma": str(GAMMA), "dist": "lev-char", **inner}
