"""ParaTag: a span detector trained on human taggings, used as a metric (ParaTag, sections 5.1 and 5.2).

The detector (section 5.1, equations 1–3) reads the words of two sentences joined by
``[SEP]``, takes each word's first-subword state of the encoder's last layer and maps it
with one 2 x d linear layer W (no bias) to the logits G: G[0] says "paraphrased", G[1]
"tagged" (no counterpart in the other sentence). The state of ``[SEP]`` is not used.
As a metric ("matching to score", equations 4–7): S = G[0] − G[1] per word, FScore the
mean of S over both sentences, PScore over the first (the model output X1, here the
hypothesis) and RScore over the second (the reference X2, here the source).

Detectors are trained by ``manage.py train_span_detector`` (``paratag_training``) and
stored as numbered versions in their campaign's own directory under PARATAG_DETECTORS_DIR
(``campaign-<pk>/``), each with a manifest. The metric reads one directory: the latest
version in it, or the one named; its signature names directory and version, so a detector
is known wherever its scores go. In Parasol each campaign is scored by its own detectors
(or one it names): `scoring.campaign_metrics`.
"""

import hashlib
import json
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

import numpy as np

from metrics.base import Metric, MetricUnavailable, setting
from metrics.loading import default_device
from metrics.words import TOKENISATION, word_tokens

PARAPHRASED, TAGGED = 0, 1  # the rows of G
SCORES = {"f": "FScore", "p": "PScore", "r": "RScore"}
LATEST = "latest"
MANIFEST = "manifest.json"
HEAD_FILE = "head.pt"
ENCODER_DIR = "encoder"
# Subwords per pair: longer pairs lose their last subwords (their words get no score, said in details).
MAX_LENGTH = 256
DEFAULT_DETECTORS_DIR = Path(__file__).resolve().parents[1] / "var" / "detectors"


# The artefacts: numbered versions, each a directory with a manifest.


def detectors_path(value=None) -> Path:
    """PARATAG_DETECTORS_DIR, else var/detectors of this checkout."""
    return Path(setting("PARATAG_DETECTORS_DIR", str(DEFAULT_DETECTORS_DIR), value=value))


def campaign_detectors_path(campaign_pk, root=None) -> Path:
    """The directory of one campaign's detectors: keyed by its primary key, which no other campaign ever takes."""
    return detectors_path(root) / f"campaign-{int(campaign_pk)}"


def detector_versions(directory) -> list[str]:
    """The stored versions, oldest first (names start with a zero-padded number)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(path.name for path in directory.iterdir() if (path / MANIFEST).is_file())


def read_manifest(path) -> dict:
    with open(Path(path) / MANIFEST, encoding="utf-8") as handle:
        return json.load(handle)


def resolve_detector(directory, name=LATEST) -> Path:
    """The directory of the detector ``name`` (a version, or ``latest``); the message says how to get one."""
    directory = Path(directory)
    versions = detector_versions(directory)
    if name == LATEST:
        if not versions:
            raise MetricUnavailable(
                f"no ParaTag detector in {directory}: train one with `manage.py train_span_detector CAMPAIGN` "
                "(or set PARATAG_DETECTORS_DIR)"
            )
        return directory / versions[-1]
    if name not in versions:
        raise MetricUnavailable(
            f"the detector {name!r} (PARATAG_DETECTOR, or a campaign's choice) is not in {directory} "
            f"(stored: {', '.join(versions) or 'none'})"
        )
    return directory / name


def detector_name(path) -> str:
    """``campaign-7/0003-label``: a version with its directory, unique in a deployment (a version name alone is not)."""
    path = Path(path)
    return f"{path.parent.name}/{path.name}"


def next_version_name(directory, label) -> str:
    """``0007-label``: one more than the highest stored number."""
    numbers = [int(name.split("-", 1)[0]) for name in detector_versions(directory) if name.split("-", 1)[0].isdigit()]
    return f"{max(numbers, default=0) + 1:04d}-{label}"


def file_digest(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


# The model of section 5.1.


def build_detector(encoder_path):
    """(tokenizer, detector) on a local Hugging Face encoder, with a fresh head W."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(encoder_path), local_files_only=True)
        encoder = AutoModel.from_pretrained(str(encoder_path), local_files_only=True)
    except (OSError, ValueError) as error:
        raise MetricUnavailable(f"cannot load the encoder {encoder_path}: {error}") from error
    if not tokenizer.is_fast:
        raise MetricUnavailable(f"the encoder {encoder_path} has no fast tokenizer: words cannot be mapped to subwords")

    class SpanDetector(torch.nn.Module):
        """Equations 1–2: H = Transformer([X1; [SEP]; X2]); G = WH, with W in R^(2 x d)."""

        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder
            self.head = torch.nn.Linear(encoder.config.hidden_size, 2, bias=False)

        def forward(self, **inputs):
            return self.head(self.encoder(**inputs).last_hidden_state)

    return tokenizer, SpanDetector(encoder)


def save_detector(tokenizer, detector, directory):
    import torch

    directory = Path(directory)
    detector.encoder.save_pretrained(directory / ENCODER_DIR)
    tokenizer.save_pretrained(directory / ENCODER_DIR)
    torch.save(detector.head.state_dict(), directory / HEAD_FILE)


@lru_cache(maxsize=2)
def load_detector(path, device):
    """(tokenizer, detector) of a stored version, in eval mode on ``device``: once per process and version."""
    import torch

    tokenizer, detector = build_detector(Path(path) / ENCODER_DIR)
    detector.head.load_state_dict(torch.load(Path(path) / HEAD_FILE, map_location="cpu", weights_only=True))
    return tokenizer, detector.to(device).eval()


def encode(tokenizer, pairs, max_length=MAX_LENGTH):
    """Tokenise (first words, second words) pairs as one batch: [CLS] X1 [SEP] X2 [SEP].

    Returns (encoding, positions): per pair, per sentence, the index of each word's first
    subword, or -1 for a word with no subword left (truncated, or dropped by the tokenizer).
    ``[CLS]`` and the ``[SEP]`` tokens belong to no word, so they are never read.
    """
    encoding = tokenizer(
        [list(first) for first, _ in pairs],
        [list(second) for _, second in pairs],
        is_split_into_words=True,
        truncation=True,
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )
    positions = []
    for i, (first, second) in enumerate(pairs):
        found = ([-1] * len(first), [-1] * len(second))
        for position, (side, word) in enumerate(zip(encoding.sequence_ids(i), encoding.word_ids(i), strict=True)):
            if side is not None and word is not None and found[side][word] == -1:
                found[side][word] = position
        positions.append(found)
    return encoding, positions


def word_logits(tokenizer, detector, pairs, *, device, batch_size=32, max_length=MAX_LENGTH):
    """G per word (an array of words x 2 per sentence; NaN rows for unread words), batched by length."""
    import torch

    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    results = [None] * len(pairs)
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            encoding, positions = encode(tokenizer, [pairs[i] for i in chunk], max_length)
            logits = detector(**{key: value.to(device) for key, value in encoding.items()}).float().cpu().numpy()
            for row, i in enumerate(chunk):
                results[i] = tuple(_gather(logits[row], side_positions) for side_positions in positions[row])
    return results


def _gather(logits, positions):
    out = np.full((len(positions), 2), np.nan)
    for word, position in enumerate(positions):
        if position >= 0:
            out[word] = logits[position]
    return out


def matching_scores(first_logits, second_logits) -> dict:
    """Equations 4–7 for one pair, with the predicted tags (G[1] > G[0]) and the tagged share.

    A sentence with no read word has no mean: its score is 0 (neither side of the
    decision), and ``unread`` counts the words the detector never saw.
    """
    s_first = first_logits[:, PARAPHRASED] - first_logits[:, TAGGED]
    s_second = second_logits[:, PARAPHRASED] - second_logits[:, TAGGED]
    both = np.concatenate([s_first, s_second])
    tags_first, tags_second = (np.nan_to_num(s_first, nan=1.0) < 0), (np.nan_to_num(s_second, nan=1.0) < 0)
    n_words = len(both)
    return {
        "f": _mean(both),
        "p": _mean(s_first),
        "r": _mean(s_second),
        "tagged_share": float((tags_first.sum() + tags_second.sum()) / n_words) if n_words else 0.0,
        "tags_first": [int(i) for i in np.flatnonzero(tags_first)],
        "tags_second": [int(i) for i in np.flatnonzero(tags_second)],
        "unread": int(np.isnan(both).sum()),
    }


def _mean(values):
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else 0.0


class ParaTag(Metric):
    """FScore (default), PScore or RScore of a trained detector (the latest in ``detectors_dir`` unless ``detector``
    names a version); details keep all three and the tags."""

    name = "paratag"

    def __init__(self, *, detector=None, detectors_dir=None, score=None, device=None, batch_size=32):
        self.directory = detectors_path(detectors_dir)
        self.detector_name = setting("PARATAG_DETECTOR", LATEST, value=detector)
        self.score_name = setting("PARATAG_SCORE", "f", choices=SCORES, value=score)
        self.device = device or default_device()
        self.batch_size = batch_size
        self.path = None

    def signature(self):
        # The detector in use changes only here: a signature and the scores stored under it come from one version.
        self.path = resolve_detector(self.directory, self.detector_name)
        return super().signature()

    def _signature_fields(self):
        manifest = read_manifest(self.path)
        return {
            "impl": f"transformers-{version('transformers')}",
            "detector": detector_name(self.path),
            "weights": manifest.get("weights_sha256", "unknown"),
            "encoder": manifest.get("encoder", "unknown"),
            "score": SCORES[self.score_name],
            # The words tagged: a tag index means something only with the tokenisation it indexes.
            "tokens": f"words-v{TOKENISATION}",
        }

    def _score_batch_with_details(self, sources, hypotheses):
        if self.path is None:
            self.path = resolve_detector(self.directory, self.detector_name)
        tokenizer, detector = load_detector(str(self.path), self.device)
        # X1 is the model output (the hypothesis), X2 the reference (the source), as in section 5.2.
        pairs = [(word_tokens(h), word_tokens(s)) for s, h in zip(sources, hypotheses, strict=True)]
        logits = word_logits(tokenizer, detector, pairs, device=self.device, batch_size=self.batch_size)
        values, details = [], []
        for first, second in logits:
            result = matching_scores(first, second)  # first: the hypothesis, second: the source
            values.append(result[self.score_name])
            details.append(
                {
                    "detector": detector_name(self.path),
                    "fscore": result["f"],
                    "pscore": result["p"],
                    "rscore": result["r"],
                    "tagged_share": result["tagged_share"],
                    "tags": {"source": result["tags_second"], "hypothesis": result["tags_first"]},
                    "n_words": {"source": len(second), "hypothesis": len(first)},
                    "tokenisation": TOKENISATION,
                    "unread_words": result["unread"],
                }
            )
        return values, details
