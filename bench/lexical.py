"""Throughput of the lexical metrics (lev, bleu, meteor) on generated pairs, one core.

    python bench/lexical.py [--pairs 10000]

Target: at least 2,000 pairs/s for lev and bleu. Not a test: it prints numbers.
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics import get_metric  # noqa: E402

WORDS = (
    "the a cat dog house river city council president film market shares volume police agents children "
    "flew walked said reported bought sold described revealed appointed served released produced directed "
    "quickly slowly never always yesterday today old new red large small happy glad quiet loud"
).split()
PUNCTUATION = [",", ".", "!", "?", ";", ":", "'s", '"']


def sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 25))]
    for _ in range(rng.randint(0, 3)):
        position = rng.randrange(len(words))
        words[position] += rng.choice(PUNCTUATION)
    return " ".join(words).capitalize() + "."


def paraphrase_like(rng, source):
    """The source with a few words replaced, dropped or swapped, as a generated hypothesis would be."""
    words = source.split()
    for _ in range(rng.randint(1, 5)):
        i = rng.randrange(len(words))
        action = rng.random()
        if action < 0.5:
            words[i] = rng.choice(WORDS)
        elif action < 0.7 and len(words) > 4:
            del words[i]
        else:
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
    return " ".join(words)


def generate_pairs(count, seed=0):
    rng = random.Random(seed)
    sources = [sentence(rng) for _ in range(count)]
    return sources, [paraphrase_like(rng, source) for source in sources]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as a worker would get
    sources, hypotheses = generate_pairs(args.pairs)
    print(f"{args.pairs} generated pairs, one core (CPU affinity {sorted(os.sched_getaffinity(0))})")
    for name, target in (("lev", 2000), ("bleu", 2000), ("meteor", None)):
        metric = get_metric(name)
        metric.score(sources=sources[:10], hypotheses=hypotheses[:10])  # warm-up (WordNet index load)
        start = time.perf_counter()
        metric.score(sources=sources, hypotheses=hypotheses)
        rate = args.pairs / (time.perf_counter() - start)
        verdict = "" if target is None else (f"  target {target}: " + ("met" if rate >= target else "MISSED"))
        print(f"{name:7s} {rate:12,.0f} pairs/s{verdict}")


if __name__ == "__main__":
    main()
