"""ParaTag's span detector: training time per 1,000 tagged pairs and epoch, and scoring throughput.

Trains on the project's fixture of tagged pairs (fixtures/span_detector_pairs.jsonl, repeated
to --pairs), then scores --score-pairs pairs with metric `paratag` (batched, sorted by length)
against a one-pair-per-forward-pass reference. Prints the token counts beside the times.

    python bench/span_detector.py                      # packaged MiniLM on CPU
    python bench/span_detector.py --device cuda --encoder /path/to/deberta-v3-large

Targets (ours, not the paper's): training under 60 s per 1,000 pairs and epoch on a CPU core
with the MiniLM encoder; scoring at least 5x the one-pair-per-pass rate. Not a test: it prints numbers.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from metrics.loading import embedded_minilm_path  # noqa: E402
from metrics.paratag import ParaTag, encode  # noqa: E402
from metrics.paratag_training import TaggedPair, TrainingOptions, store, train  # noqa: E402
from metrics.words import word_tokens  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "span_detector_pairs.jsonl"
TRAIN_SECONDS_TARGET = 60.0  # per 1,000 pairs and epoch, CPU
BATCHING_TARGET = 5.0


def fixture_pairs(count):
    rows = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = (rows * (count // len(rows) + 1))[:count]
    return [
        TaggedPair(
            f"{row['id']}-{i}",
            {side: word_tokens(row[side]) for side in ("source", "hypothesis")},
            {side: row[f"{side}_tags"] for side in ("source", "hypothesis")},
        )
        for i, row in enumerate(rows)
    ]


def subword_tokens(tokenizer, pairs):
    encoding, _ = encode(tokenizer, [pair.detector_input() for pair in pairs])
    return int(encoding["attention_mask"].sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default=str(embedded_minilm_path()))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--pairs", type=int, default=200, help="training pairs (the fixture repeated)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--score-pairs", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=32, help="scoring batch")
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), device {args.device}")

    pairs = fixture_pairs(args.pairs)
    options = TrainingOptions(encoder_path=args.encoder, epochs=args.epochs, device=args.device, patience=args.epochs)
    start = time.perf_counter()
    tokenizer, detector, _summary = train(pairs, pairs[:20], options)
    seconds = time.perf_counter() - start
    tokens = subword_tokens(tokenizer, pairs)
    per_thousand = seconds / args.epochs * 1000 / len(pairs)
    print(
        f"training: {len(pairs)} pairs x {args.epochs} epoch(s), {tokens:,} subword tokens per epoch "
        f"({tokens / len(pairs):.1f} per pair): {seconds:.1f} s (validation included) = "
        f"{per_thousand:.1f} s per 1,000 pairs and epoch (target <= {TRAIN_SECONDS_TARGET:.0f} s on CPU)"
    )

    with tempfile.TemporaryDirectory() as directory:
        store(tokenizer, detector, {"campaign": "bench", "encoder": Path(args.encoder).name}, directory, "bench")
        sources = [" ".join(pair.words["source"]) for pair in fixture_pairs(args.score_pairs)]
        hypotheses = [" ".join(pair.words["hypothesis"]) for pair in fixture_pairs(args.score_pairs)]
        rates = {}
        for label, batch_size, n in (
            ("batched", args.batch_size, len(sources)),
            ("one pair per pass", 1, min(100, len(sources))),
        ):
            metric = ParaTag(detectors_dir=directory, device=args.device, batch_size=batch_size)
            metric.score(sources=sources[:2], hypotheses=hypotheses[:2])  # load and warm up
            start = time.perf_counter()
            metric.score(sources=sources[:n], hypotheses=hypotheses[:n])
            rates[label] = n / (time.perf_counter() - start)
            print(f"scoring, {label} (batch {batch_size}): {n} pairs, {rates[label]:.1f} pairs/s")
    ratio = rates["batched"] / rates["one pair per pass"]
    print(f"batching: {ratio:.1f}x the one-pair rate (target >= {BATCHING_TARGET:.0f}x)")


if __name__ == "__main__":
    main()
