"""Rank correlations of a report at corpus scale: scipy's spearmanr + kendalltau per metric and corpus
(the code before issue 29) against `reports.analysis.ranking.rank_correlations` (one sort per variable).

    .venv/bin/python bench/rank_correlations.py --pairs 400000 --metrics 9 --repeat 3

Synthetic scores (ties, integer distances, continuous) against 0/1 gold labels and mean 4-point
answers, two corpora (three subsets with Global). Prints the best of --repeat runs of each and
whether the two tables are equal to the last bit.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reports.analysis.common import orient, subsets  # noqa: E402
from reports.analysis.ranking import RANK_TARGETS, rank_correlations  # noqa: E402


def corpus_frame(n, n_metrics, seed=0):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n)
    columns = {
        "corpus": np.where(rng.random(n) < 0.5, "qqp", "paws"),
        "paraphrase": gold.astype(float),
        "mean_ordinal": rng.integers(1, 5, n) + rng.integers(0, 3, n) / 3,
    }
    directions = {}
    for i in range(n_metrics):
        score = gold * 0.3 + rng.random(n)
        if i % 3 == 0:
            score = np.round(score, 2)  # many ties
        elif i % 3 == 1:
            score = np.floor(score * 30)  # an integer distance
        columns[f"metric{i}"] = score
        directions[f"metric{i}"] = "higher" if i % 2 else "lower"
    return pd.DataFrame(columns), directions


def with_scipy(frame, metrics, directions, label_source):
    """The computation before issue 29: scipy ranks both variables again for every metric and corpus."""
    target = RANK_TARGETS[label_source]
    judged = frame.loc[frame[target].notna(), ["corpus", target, *metrics]]
    rows = []
    for metric in metrics:
        for corpus, part in subsets(judged):
            scored = part[metric].notna().to_numpy()
            scores = orient(part[metric].to_numpy(dtype=float)[scored], directions[metric])
            labels = part[target].to_numpy(dtype=float)[scored]
            rho, tau = stats.spearmanr(scores, labels), stats.kendalltau(scores, labels)
            rows.append((metric, corpus, rho.statistic, rho.pvalue, tau.statistic, tau.pvalue))
    return rows


def best_of(repeat, function, *args):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(*args)
        times.append(time.perf_counter() - start)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=400_000)
    parser.add_argument("--metrics", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    frame, directions = corpus_frame(args.pairs, args.metrics)
    metrics = list(directions)
    for label_source in ("gold", "human"):
        before, expected = best_of(args.repeat, with_scipy, frame, metrics, directions, label_source)
        after, (table, _) = best_of(args.repeat, rank_correlations, frame, metrics, directions, label_source)
        columns = ["metric", "corpus", "spearman_rho", "spearman_p", "kendall_tau", "kendall_p"]
        equal = [tuple(row) for row in table[columns].itertuples(index=False)] == expected
        print(
            f"{label_source:5} {args.pairs:,} pairs x {args.metrics} metrics x 3 subsets: scipy {before:5.2f} s, "
            f"one sort per variable {after:5.2f} s (best of {args.repeat}); equal to the last bit: {equal}"
        )


if __name__ == "__main__":
    main()
