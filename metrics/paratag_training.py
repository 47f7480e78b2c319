"""Training ParaTag's detector (section 5.1 and 6.2) on tagged pairs, Django-free.

A pair's input is [hypothesis words; [SEP]; source words] (X1 the output, X2 the
reference, as the metric reads them) and its labels the 0/1 tags of each word, on the
first subword only; cross-entropy (equation 3) over those positions. The paper's recipe
where it fits a small campaign: AdamW, its learning-rate grid [1e-5, 3e-5, 5e-5] as an
option, model selection by validation span F1 (early stopping), the test split read once.
"""

import copy
import json
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metrics.paratag import (
    ENCODER_DIR,
    HEAD_FILE,
    MANIFEST,
    TAGGED,
    build_detector,
    file_digest,
    next_version_name,
    save_detector,
    word_logits,
)
from metrics.tag_agreement import sequence_agreement

PAPER_LEARNING_RATES = (1e-5, 3e-5, 5e-5)  # section 6.2
DEFAULT_LEARNING_RATE = 5e-5  # the grid's largest: a campaign gives far fewer steps than the paper's 1,000
SPLIT_SHARES = (0.8, 0.1, 0.1)  # train, validation, test
MIN_TAGGED_PAIRS = 30
MIN_SOURCES = 3  # one per part, at least
SIDES = ("source", "hypothesis")


class TooFewPairs(ValueError):
    """The campaign cannot train a detector; the message says how many tagged pairs are needed."""


@dataclass(frozen=True)
class TaggedPair:
    pair_id: str
    words: dict  # side -> list of words
    tags: dict  # side -> list of 0/1, same lengths

    @property
    def source_text(self):
        return " ".join(self.words["source"])

    def detector_input(self):
        """(X1, X2) = (hypothesis words, source words)."""
        return self.words["hypothesis"], self.words["source"]

    def labels(self):
        return self.tags["hypothesis"], self.tags["source"]


@dataclass
class TrainingOptions:
    encoder_path: str
    epochs: int = 10
    learning_rates: tuple = (DEFAULT_LEARNING_RATE,)
    batch_size: int = 16
    device: str = "cpu"
    seed: int = 13
    patience: int = 3  # epochs without a better validation F1 before stopping
    max_length: int = 256
    history: list = field(default_factory=list)


def check_enough(pairs):
    """Raise TooFewPairs, saying what is needed, unless the pairs can be split three ways by source."""
    n_sources = len({pair.source_text for pair in pairs})
    if len(pairs) < MIN_TAGGED_PAIRS or n_sources < MIN_SOURCES:
        raise TooFewPairs(
            f"training a detector needs at least {MIN_TAGGED_PAIRS} tagged pairs with at least {MIN_SOURCES} "
            f"different sources; this campaign has {len(pairs)} tagged pair(s) with {n_sources} source(s)"
        )


def split_by_source(pairs, seed, shares=SPLIT_SHARES):
    """(train, validation, test): all pairs of one source sentence fall in the same part.

    Sources are shuffled with ``seed`` and dealt out until each part holds its share of
    pairs; validation and test get at least one source each.
    """
    groups = {}
    for pair in pairs:
        groups.setdefault(pair.source_text, []).append(pair)
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    total = len(pairs)
    parts = ([], [], [])
    wanted_test, wanted_validation = shares[2] * total, shares[1] * total
    for key in keys:
        if not parts[2] or len(parts[2]) + len(groups[key]) <= wanted_test:
            parts[2].extend(groups[key])
        elif not parts[1] or len(parts[1]) + len(groups[key]) <= wanted_validation:
            parts[1].extend(groups[key])
        else:
            parts[0].extend(groups[key])
    return parts[0], parts[1], parts[2]


def _batch_tensors(tokenizer, pairs, max_length):
    """Inputs and labels: a word's tag on its first subword, -100 (ignored) everywhere else, [SEP] included."""
    import torch

    from metrics.paratag import encode

    encoding, positions = encode(tokenizer, [pair.detector_input() for pair in pairs], max_length)
    labels = torch.full(encoding["input_ids"].shape, -100, dtype=torch.long)
    for row, pair in enumerate(pairs):
        for side_positions, side_tags in zip(positions[row], pair.labels(), strict=True):
            for position, tag in zip(side_positions, side_tags, strict=True):
                if position >= 0:
                    labels[row, position] = int(tag)
    return encoding, labels


def predict(tokenizer, detector, pairs, *, device, batch_size=32, max_length=256):
    """Per pair, the predicted 0/1 tags per side (a word is tagged when G[1] > G[0])."""
    detector.eval()
    logits = word_logits(
        tokenizer,
        detector,
        [pair.detector_input() for pair in pairs],
        device=device,
        batch_size=batch_size,
        max_length=max_length,
    )
    predicted = []
    for first, second in logits:
        tags = [[int(row[TAGGED] > row[1 - TAGGED]) for row in side] for side in (first, second)]
        predicted.append({"hypothesis": tags[0], "source": tags[1]})
    return predicted


def evaluate(pairs, predicted) -> dict:
    """Table 3's word accuracy and span F1 (with kappa) of predicted tags against the pairs' tags."""
    truth = [pair.tags[side] for pair in pairs for side in SIDES]
    guess = [tags[side] for tags in predicted for side in SIDES]
    return {"n_pairs": len(pairs), **_plain(sequence_agreement(truth, guess))}


def _plain(figures):
    """JSON-ready figures: numpy numbers as Python ones, NaN (kappa of constant tags) as None."""
    plain = {key: value.item() if isinstance(value, np.generic) else value for key, value in figures.items()}
    return {key: None if isinstance(value, float) and np.isnan(value) else value for key, value in plain.items()}


def train(train_pairs, validation_pairs, options: TrainingOptions, progress=None):
    """(tokenizer, detector, summary): the best detector over the learning-rate grid by validation span F1.

    ``progress(done, total)`` is called after every optimisation step (total steps over the grid).
    """
    steps_per_epoch = -(-len(train_pairs) // options.batch_size)
    total = steps_per_epoch * options.epochs * len(options.learning_rates)
    done, best, started = 0, None, time.perf_counter()
    for learning_rate in options.learning_rates:
        tokenizer, detector, figures, done = _train_one(
            train_pairs, validation_pairs, options, learning_rate, progress, done, total
        )
        if best is None or figures["validation_span_f1"] > best[2]["validation_span_f1"]:
            best = (tokenizer, detector, figures)
    tokenizer, detector, figures = best
    summary = {**figures, "grid": options.history, "seconds": round(time.perf_counter() - started, 1)}
    return tokenizer, detector, summary


def _train_one(train_pairs, validation_pairs, options, learning_rate, progress, done, total):
    import torch

    torch.manual_seed(options.seed)
    rng = random.Random(options.seed)
    tokenizer, detector = build_detector(options.encoder_path)
    detector.to(options.device)
    optimiser = torch.optim.AdamW(detector.parameters(), lr=learning_rate)
    loss_of = torch.nn.CrossEntropyLoss(ignore_index=-100)  # equation 3, first subwords only
    best_f1, best_state, best_epoch, stale = -1.0, None, 0, 0
    for epoch in range(1, options.epochs + 1):
        detector.train()
        order = list(train_pairs)
        rng.shuffle(order)
        for start in range(0, len(order), options.batch_size):
            encoding, labels = _batch_tensors(tokenizer, order[start : start + options.batch_size], options.max_length)
            logits = detector(**{key: value.to(options.device) for key, value in encoding.items()})
            loss = loss_of(logits.reshape(-1, 2), labels.to(options.device).reshape(-1))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            done += 1
            if progress:
                progress(done, total)
        scores = evaluate(validation_pairs, predict(tokenizer, detector, validation_pairs, device=options.device))
        options.history.append({"learning_rate": learning_rate, "epoch": epoch, "validation": scores})
        if scores["span_f1"] > best_f1:
            best_f1, best_epoch, stale = scores["span_f1"], epoch, 0
            best_state = copy.deepcopy({key: value.cpu() for key, value in detector.state_dict().items()})
        else:
            stale += 1
            if stale >= options.patience:
                done += (options.epochs - epoch) * -(-len(train_pairs) // options.batch_size)
                break
    detector.load_state_dict(best_state)
    figures = {"learning_rate": learning_rate, "best_epoch": best_epoch, "validation_span_f1": best_f1}
    return tokenizer, detector.eval(), figures, done


def store(tokenizer, detector, manifest, directory, label):
    """Write a new version atomically (a temporary directory renamed into place); returns its path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = next_version_name(directory, label)
    staging = directory / f".staging-{name}-{time.time_ns()}"
    try:
        save_detector(tokenizer, detector, staging)
        weights = [staging / HEAD_FILE, *sorted((staging / ENCODER_DIR).glob("*.safetensors"))]
        manifest = {"version": name, **manifest, "weights_sha256": _combined_digest(weights)}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
        staging.rename(directory / name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory / name


def _combined_digest(paths):
    return "-".join(file_digest(path)[:8] for path in paths)
