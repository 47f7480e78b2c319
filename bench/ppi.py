"""Validity of the prediction-powered estimates on simulated campaigns: coverage, widths, judgments saved.

Each simulated campaign is built to resemble a paraphrase corpus judged by volunteers:
- `--pairs` pairs, each a paraphrase with probability 0.68 (MRPC's share of paraphrases);
- three judges per pair, each right with probability 0.8 (they disagree on about a third of the pairs);
  the estimand is the rate of the judges' majority, whose expectation is known exactly
  (0.68 P(majority right) + 0.32 P(majority wrong));
- three metrics whose scores are the true class shifted by d plus standard normal noise, with d chosen
  for ROC AUCs (against the true class) of 0.65, 0.8 and 0.9: d = sqrt(2) Phi^-1(AUC).
Three designs estimate the paraphrase rate with a nominal 95% interval:
- human-only: `--labelled` pairs drawn uniformly, the labelled mean and its CLT interval;
- PPI++: the same labelled pairs plus the metric on all pairs (cross-fitted, power-tuned: `reports.analysis.ppi`);
- active: each pair judged with probability growing with the metric's uncertainty, with a floor, the
  expected number of labels the same (`reports.analysis.ppi.active_probabilities`), and the
  inverse-probability-weighted power-tuned estimate (`active_mean`).
Printed: each design's coverage with its Monte Carlo standard error (sqrt(c(1 - c) / campaigns)) beside the
target [0.94, 0.96], the median interval width, the share of judgments saved at equal width
(1 - (width / human-only width)^2: widths go as 1/sqrt(n)), the estimate's bias with its Monte Carlo error,
and sd/se: the spread of the estimates over the campaigns over the root mean square of the standard errors
they reported (above 1: the intervals are too narrow). Also the exact coverage of the human-only normal
interval (binomial, no simulation): the finite-sample reference for every normal interval here.

Seed-stable: campaign i draws from its own stream (seed, i), so any number of `--workers` gives the same
table, `--aucs 0.65` gives the same AUC-0.65 rows as a run of all three (its draws come first), and a run
stopped early and resumed from its `--checkpoint` (a file for one set of settings) ends as an uninterrupted one.

    python bench/ppi.py [--campaigns 1000] [--pairs 2000] [--labelled 200] [--seed 2024] [--workers 1]
                        [--aucs 0.65 0.8 0.9] [--checkpoint FILE]
"""

import argparse
import multiprocessing
import os
import pickle
import sys
import time
from functools import partial

import numpy as np
from scipy.special import ndtri

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from reports.analysis import ppi  # noqa: E402

PARAPHRASE_SHARE = 0.68
JUDGE_ACCURACY = 0.8
JUDGES = 3
AUCS = (0.65, 0.8, 0.9)
TARGET = (0.94, 0.96)
CAMPAIGNS = 1000


def majority_right(accuracy=JUDGE_ACCURACY, judges=JUDGES):
    from scipy.stats import binom

    return float(binom.sf(judges // 2, judges, accuracy))


def true_rate():
    right = majority_right()
    return PARAPHRASE_SHARE * right + (1 - PARAPHRASE_SHARE) * (1 - right)


def campaign(rng, pairs):
    """(majority labels, {auc: scores}) of one simulated campaign."""
    truth = rng.random(pairs) < PARAPHRASE_SHARE
    right_votes = (rng.random((pairs, JUDGES)) < JUDGE_ACCURACY).sum(axis=1)
    majority = np.where(right_votes > JUDGES // 2, truth, ~truth).astype(float)
    scores = {auc: np.sqrt(2) * ndtri(auc) * truth + rng.standard_normal(pairs) for auc in AUCS}
    return majority, scores


def uniform(rng, y, score, labelled):
    chosen = rng.choice(len(y), labelled, replace=False)
    observed = np.full(len(y), np.nan)
    observed[chosen] = y[chosen]
    human, human_se = ppi.human_mean(y[chosen])
    out_of_fold, every_pair, _ = ppi.cross_fitted(observed, _frame(score), seed=int(rng.integers(2**31)))
    rest = np.ones(len(y), dtype=bool)
    rest[chosen] = False
    estimate, se, _ = ppi.ppi_mean(y[chosen], out_of_fold[chosen], every_pair[rest])
    return (human, human_se), (estimate, se)


def active(rng, y, score, labelled):
    probability = ppi.active_probabilities(score, labelled)
    sampled = rng.random(len(y)) < probability
    observed = np.where(sampled, y, np.nan)
    out_of_fold, every_pair, _ = ppi.cross_fitted(observed, _frame(score), seed=int(rng.integers(2**31)))
    predicted = np.where(sampled, out_of_fold, every_pair)
    estimate, se, _ = ppi.active_mean(observed, predicted, probability, sampled)
    return estimate, se


def _frame(score):
    import pandas as pd

    return pd.DataFrame({"metric": score})


def simulate(seed, index, pairs, labelled, aucs=AUCS):
    """One campaign's (estimate, se) per design, from its own random stream: the results do not depend on how
    the campaigns are split between processes."""
    rng = np.random.default_rng([seed, index])
    y, scores = campaign(rng, pairs)
    found = {}
    for auc in aucs:
        human, powered = uniform(rng, y, scores[auc], labelled)
        if auc == aucs[0]:  # one human-only interval per campaign (the same labels serve every metric)
            found["human", None] = human
        found["ppi", auc] = powered
        found["active", auc] = active(rng, y, scores[auc], labelled)
    return found


def run(args):
    """Every campaign's results, in order; with --checkpoint, saved as they come and resumed from there."""
    done = []
    if args.checkpoint and os.path.exists(args.checkpoint):
        with open(args.checkpoint, "rb") as saved:
            done = pickle.load(saved)[: args.campaigns]
    work = partial(simulate, args.seed, pairs=args.pairs, labelled=args.labelled, aucs=tuple(args.aucs))
    todo = range(len(done), args.campaigns)
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for found in pool.imap(work, todo, chunksize=4):
            done.append(found)
            if args.checkpoint and len(done) % 50 == 0:
                _save(args.checkpoint, done)
    if args.checkpoint:
        _save(args.checkpoint, done)
    return done


def _save(path, done):
    with open(f"{path}.tmp", "wb") as out:
        pickle.dump(done, out)
    os.replace(f"{path}.tmp", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=CAMPAIGNS)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--workers", type=int, default=1, help="processes (the results are the same for any number)")
    parser.add_argument("--aucs", type=float, nargs="+", default=list(AUCS), choices=AUCS, help="metrics simulated")
    parser.add_argument("--checkpoint", help="a file the results are saved to as they come, and resumed from")
    args = parser.parse_args()
    truth = true_rate()
    started = time.perf_counter()
    campaigns = run(args)
    elapsed = time.perf_counter() - started
    print(
        f"{args.campaigns} campaigns of {args.pairs} pairs, {args.labelled} labelled (expected, for active), "
        f"true rate {truth:.4f}, seed {args.seed}, {elapsed:.0f} s in this call on {args.workers} process(es)"
    )
    print(f"human-only normal interval on {args.labelled} labels, exact coverage: {exact_human_coverage(args):.4f}")
    human_width = _width([found["human", None] for found in campaigns])
    print(
        f"{'design':<8} {'metric AUC':>10} {'coverage':>9} {'± MC se':>8} {'target':>13} {'':<7}"
        f"{'median width':>12} {'saved':>7} {'bias':>8} {'± MC se':>8} {'sd/se':>6}"
    )
    for key in campaigns[0]:
        found = np.array([campaign_found[key] for campaign_found in campaigns])
        estimate, se = found[:, 0], found[:, 1]
        covered = np.abs(estimate - truth) <= ppi.Z95 * se
        coverage, width = covered.mean(), _width(found)
        mc_se = np.sqrt(coverage * (1 - coverage) / len(covered))
        met = "met" if TARGET[0] <= coverage <= TARGET[1] else "MISSED"
        bias, bias_se = estimate.mean() - truth, estimate.std(ddof=1) / np.sqrt(len(estimate))
        # The spread of the estimates over the campaigns against the standard error each campaign reports:
        # above 1, the reported one is too small (the interval too narrow).
        calibration = estimate.std(ddof=1) / np.sqrt(np.mean(se**2))
        design, auc = key
        label = "-" if auc is None else f"{auc:.2f}"
        print(
            f"{design:<8} {label:>10} {coverage:>9.4f} {mc_se:>8.4f} {f'[{TARGET[0]}, {TARGET[1]}]':>13} {met:<7}"
            f"{width:>12.4f} {1 - (width / human_width) ** 2:>7.1%} {bias:>+8.4f} {bias_se:>8.4f} {calibration:>6.3f}"
        )


def exact_human_coverage(args):
    """The coverage of the human-only normal interval computed exactly, without simulation: the labelled
    majority labels are `labelled` independent draws of a Bernoulli(true rate), so the count is binomial.
    The finite-sample reference every normal interval here is compared with."""
    from scipy.stats import binom

    n, rate = args.labelled, true_rate()
    count = np.arange(n + 1)
    mean = count / n
    se = np.sqrt(mean * (1 - mean) / n)  # ppi_py's classical interval: the labels' sd (ddof=0) over sqrt(n)
    covered = np.abs(mean - rate) <= ppi.Z95 * se
    return float(binom.pmf(count, n, rate)[covered].sum())


def _width(found):
    return float(np.median([2 * ppi.Z95 * se for _estimate, se in found]))


if __name__ == "__main__":
    main()
