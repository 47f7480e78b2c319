"""The meta-evaluation's share of a large report: `build_report` at N pairs x 9 metrics, with and without its step.

    .venv/bin/python bench/meta.py [--pairs 400000] [--judged 1000]

Not a test. In one process, on one synthetic corpus (QQP/PAWS split as bench/scale.py's, 40% paraphrases,
9 metrics as noisy functions of the gold label, ParaPLUIE ones as log-odds; `--judged` pairs with three
judges each), times the analysis alone (no database, no figures): the whole report with gold labels, and in
it the meta-evaluation's two step groups (`meta`: system accuracy, clusters, within-source, ceiling, judges'
competence; `calibration`), twice. The report command and the live page add reading and drawing on top
(bench/scale.py).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

METRICS = {
    "lev": "lower", "bleu": "higher", "meteor": "higher", "bertscore": "higher", "parascore": "higher",
    "sbert": "higher", "parapluie_direct": "higher", "parapluie_indirect": "higher", "parapluie_fs_direct": "higher",
}  # fmt: skip


def corpus(n, judged, seed=0):
    rng = np.random.default_rng(seed)
    gold = (rng.random(n) < 0.4).astype(int)
    pairs = pd.DataFrame(
        {
            "pair_id": [f"q{i}" for i in range(n)],
            "corpus": np.where(np.arange(n) % 4, "QQP", "PAWS"),
            "source": [f"s{i}" for i in range(n)],
            "edit_distance": rng.random(n),
            "gold_label": pd.array(gold, dtype="Int64"),
        }
    )
    for i, (metric, direction) in enumerate(METRICS.items()):
        signal = (gold if direction == "higher" else -gold) * (0.5 + 0.1 * i)
        pairs[metric] = np.round(signal + rng.normal(size=n), 3)
    rows = [
        (
            f"q{i}",
            f"judge-{(i + j) % 9}",
            "native",
            "same_meaning" if (gold[i] ^ (rng.random() < 0.1)) else "very_different",
        )
        for i in range(judged)
        for j in range(3)
    ]
    from annotation.tasktypes.similarity.scale import VOTE
    from annotation.votes import ANSWER_COLUMN, with_votes

    # The similarity scale's answers, with the vote columns the report reads (as `reports.frames` gives them).
    return pairs, with_votes(pd.DataFrame(rows, columns=["pair_id", "judge", "english_level", ANSWER_COLUMN]), VOTE)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=400_000)
    parser.add_argument("--judged", type=int, default=1_000)
    args = parser.parse_args()
    from reports.analysis import build_report
    from reports.analysis.report import Direct, _Steps

    pairs, judgments = corpus(args.pairs, args.judged)
    timed = {}

    class Timing(Direct):
        def map(self, calls):
            results = []
            for call in calls:
                start = time.perf_counter()
                results.append(call())
                timed[call.args[0]] = time.perf_counter() - start  # one step group: partial(_Steps._apart, group, ...)
            return results

    assert hasattr(_Steps, "_meta") and hasattr(_Steps, "_calibration")
    for round_ in (1, 2):
        start = time.perf_counter()
        report = build_report(pairs, judgments, METRICS, label_source="gold", runner=Timing())
        total = time.perf_counter() - start
        print(
            f"round {round_}: {args.pairs:,} pairs x {len(report.metrics)} metrics, gold labels: whole analysis "
            f"{total:.2f} s, of which the meta-evaluation {timed['meta'] + timed['calibration']:.2f} s "
            f"({(timed['meta'] + timed['calibration']) / total:.0%}): meta {timed['meta']:.2f} s, "
            f"calibration {timed['calibration']:.2f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
