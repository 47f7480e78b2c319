"""pivot_f1 on a generated Moses phrase table: the time to read the table and pairs/s, one core.

    python bench/pivot_f1.py [--phrases 200000] [--pairs 2000]

The table is synthetic (every word of a 5,000-word vocabulary and distinct random phrases of
2-4 words, each with 1-6 pivot translations whose probabilities sum to 1); the sentences are
drawn from the same vocabulary. No target is claimed: a real table (FBIS-sized, millions of
lines) should be measured on its own. Not a test.
"""

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.pivot_f1 import PivotF1  # noqa: E402


def write_table(path, n_phrases, rng):
    vocabulary = [f"w{i}" for i in range(5000)]
    # Every word, then distinct multi-word phrases: each English phrase's translations sum to 1.
    phrases = dict.fromkeys(vocabulary)
    while len(phrases) < max(n_phrases, len(vocabulary)):
        phrases[" ".join(rng.choices(vocabulary, k=rng.randint(2, 4)))] = None
    with open(path, "w", encoding="utf-8") as handle:
        for english in phrases:
            count = rng.randint(1, 500)
            n = rng.randint(1, 6)
            weights = [rng.random() for _ in range(n)]
            for weight in weights:
                pivot = " ".join(f"p{rng.randrange(8000)}" for _ in range(rng.randint(1, 4)))
                probability = weight / sum(weights)
                handle.write(f"{pivot} ||| {english} ||| {probability:.4f} 0.5 0.5 0.5 ||| 0-0 ||| {count} 10 5\n")
    return vocabulary


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--phrases", type=int, default=200_000)
    parser.add_argument("--pairs", type=int, default=2000)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "phrase-table"
        vocabulary = write_table(path, args.phrases, rng)
        lines = sum(1 for _ in open(path, encoding="utf-8"))
        start = time.perf_counter()
        metric = PivotF1(phrase_table=str(path), stem="none")
        loaded = time.perf_counter() - start
        sentences = [" ".join(rng.choices(vocabulary, k=rng.randint(8, 25))) for _ in range(2 * args.pairs)]
        start = time.perf_counter()
        metric.score(sources=sentences[: args.pairs], hypotheses=sentences[args.pairs :])
        scored = time.perf_counter() - start
    print(f"table: {lines:,} lines, {len(metric.table.entries):,} English phrases, read in {loaded:.2f} s")
    print(f"pivot_f1: {args.pairs:,} pairs in {scored:.2f} s = {args.pairs / scored:,.0f} pairs/s (one core)")


if __name__ == "__main__":
    main()
