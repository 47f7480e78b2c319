"""LEV.: character Levenshtein distance normalised by the longer string (lower = closer)."""

from importlib.metadata import version

from rapidfuzz.distance import Levenshtein as _levenshtein

from metrics.base import Metric


def normalized_edit_distance(source, hypothesis):
    """Insertions, deletions and substitutions (each cost 1) over the longer length; 0 for two empty strings."""
    return _levenshtein.normalized_distance(source, hypothesis)


class Levenshtein(Metric):
    name = "lev"

    def _score_pair(self, source, hypothesis):
        return normalized_edit_distance(source, hypothesis)

    def _signature_fields(self):
        return {"impl": f"rapidfuzz-{version('rapidfuzz')}", "unit": "char", "norm": "max-len"}
