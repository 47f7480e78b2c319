"""What the averaged candidate adds to the prediction-powered estimates' predictor, and what it costs.

The report's predictor is chosen, by cross-fitted loss, among each metric alone, every metric combined (a slope per
metric) and every metric averaged (one slope on the mean of their standardised scores). The average is learned
better from a few hundred labels when the metrics are about as good as each other, and is worse than the combination
when one metric is much better: the choice should take it where it helps and cost little where it does not (one more
candidate makes the choice a little noisier).

This bench runs PPI++ (the report's cross-fitting, uniform labels) on the same simulated campaigns as `bench/ppi.py`
(its judges, score shapes and AUCs against the judges' majority) three times side by side, with the same folds:
the candidates without the average (the report before it), with it (the report now), and the single metrics alone.
Cells: the three metrics equally good (AUC 0.65, 0.8, 0.9 each), and metrics of unequal quality (each metric's AUC
given). Printed: each saving (1 - the PPI++ variance over the judges-only one, per campaign, averaged), the paired
difference the average makes with its Monte Carlo standard error, and how often each kind of candidate was chosen.

    python bench/ppi_candidates.py [--campaigns 300] [--pairs 2000] [--labelled 200] [--seed 2024]
"""

import argparse
import importlib.util
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from reports.analysis import ppi  # noqa: E402

CELLS = [(0.65, 0.65, 0.65), (0.8, 0.8, 0.8), (0.9, 0.9, 0.9), (0.9, 0.75, 0.6), (0.6, 0.75, 0.9), (0.85, 0.65, 0.65),
         (0.8, 0.8, 0.55)]  # fmt: skip


def simulation():
    """`bench/ppi.py`, the simulated campaigns' source."""
    spec = importlib.util.spec_from_file_location("ppi_bench", Path(__file__).with_name("ppi.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cell_savings(bench, aucs, campaigns, pairs, labelled, seed):
    """Per candidate set: the ratio of PPI++'s variance to the judges-only one per campaign, and the choices made."""
    # each metric's signal for its own AUC against the majority (bench.strengths_for gives the three metrics' for one)
    strengths = np.array([bench.strengths_for(auc)[j] for j, auc in enumerate(aucs)])
    streams = [np.random.default_rng([seed, index, *(int(a * 100) for a in aucs)]) for index in range(campaigns)]
    y, z, uniform = bench.campaigns(streams, pairs, labelled, strengths)
    folds = bench._folds(streams, uniform)
    observed = np.where(uniform, y, np.nan)
    judges = bench._judges_only(y, uniform)[:, 1] ** 2
    without_average = [c for c in bench.EVERY if c != ppi.MEAN]  # the report's candidates before the average
    found = {}
    for name, candidates in (("without", without_average), ("with", bench.EVERY), ("single", bench.SINGLES)):
        out_of_fold, every_pair, chosen = ppi.cross_fit_batch(z, observed, uniform, folds, candidates)
        _estimate, se, _lam = ppi.ppi_mean_closed_form(observed, np.where(uniform, out_of_fold, every_pair), uniform)
        kinds = Counter("single" if candidates[c] in bench.SINGLES else str(candidates[c]) for c in chosen.ravel())
        found[name] = se**2 / judges, kinds
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=300)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    bench = simulation()
    started = time.perf_counter()
    print(
        f"{args.campaigns} campaigns per cell of {args.pairs} pairs, {args.labelled} labelled uniformly, seed "
        f"{args.seed}; PPI++ savings of the judges-only variance (± one MC s.e.)"
    )
    print(
        f"{'metrics AUC':<18} {'without avg':>11} {'with avg':>9} {'difference':>16} {'singles':>8}  "
        f"chosen with the average (folds)"
    )
    for aucs in CELLS:
        found = cell_savings(bench, aucs, args.campaigns, args.pairs, args.labelled, args.seed)
        without, with_average, single = (found[name][0] for name in ("without", "with", "single"))
        difference = without - with_average  # paired, > 0: the average saves more
        mc = difference.std(ddof=1) / np.sqrt(len(difference))
        kinds = found["with"][1]
        total = sum(kinds.values())
        shares = ", ".join(
            f"{label} {kinds[key] / total:.0%}"
            for key, label in (("single", "one metric"), ("None", "combined"), (ppi.MEAN, "averaged"))
        )
        print(
            f"{'/'.join(f'{a:g}' for a in aucs):<18} {1 - without.mean():>11.1%} {1 - with_average.mean():>9.1%} "
            f"{difference.mean():>+9.2%} ± {mc:.2%} {1 - single.mean():>8.1%}  {shares}"
        )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
