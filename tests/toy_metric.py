"""The toy metric's class (`tests.toys`): imported on first use, once the toy's name is registered."""

from metrics.base import Metric


class ToyLengthRatio(Metric):
    """The shorter sentence's length in characters over the longer's: 1 when they are as long."""

    name = "toy_length_ratio"

    def _score_pair(self, source, hypothesis):
        longer = max(len(source), len(hypothesis))
        return min(len(source), len(hypothesis)) / longer if longer else 1.0

    def _signature_fields(self):
        return {"unit": "characters"}
