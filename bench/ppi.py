"""Prediction-powered estimates on simulated campaigns, stated as the report states them: coverage, savings,
the theoretical optimum beside each, and the effective labelled pairs the report would print.

Each simulated campaign resembles a paraphrase corpus judged by volunteers:
- `--pairs` pairs, each with a latent meaning distance s ~ N(0, 1); a paraphrase when s is above MRPC's 32%
  quantile (68% paraphrases);
- three judges per pair who err more on borderline pairs: each is wrong with probability
  0.02 + 0.45 exp(-|s - threshold| / 0.4) (about 17% on average); the label is their majority, and the estimand
  is the majority's paraphrase rate over every pair (computed once on 2,000,000 simulated pairs);
- three metrics per cell, each a function of the same latent s plus its own noise, so that they too are unsure on
  borderline pairs, in the shapes real scores have: a BLEU-like score bounded in [0, 1] and exactly 0 on the 13%
  lowest pairs (ties at 0), a similarity squeezed towards 1, and a log-likelihood ratio with skewed (Gumbel)
  noise. Their signal is set so that each metric's ROC AUC **against the judges' majority** (what the report
  shows) is the cell's: 0.65, 0.8 or 0.9.

Designs, each with a nominal 95% interval and `--labelled` labels (in expectation for active choice):
- judges only: a uniform draw of labelled pairs, the classical interval;
- PPI++, best single metric: the same labels, the cross-fitted choice among the three metrics alone;
- PPI++, every metric: the report's predictor (the three alone and combined, chosen by cross-fitted loss);
- active choice: the report's waves (`ppi.wave_plan`, `ppi.robust_probabilities`), the report's predictor;
- waves, oracle model: active choice's waves, the later ones guided by the oracle calibrated model instead of the
  model of the labels so far: the ceiling of a design that draws its first labels before it has a model;
- optimal rule: one wave drawn with pi proportional to the uncertainty of the oracle calibrated model (fitted on
  200,000 pairs), the report's predictor: what active choice would reach if it knew the model in advance.
Everything is computed by `reports.analysis.ppi`'s own functions, vectorised over campaigns (PPI++ by its closed
form, which a test holds equal to ppi-python's).

Printed per design: coverage with its Monte Carlo standard error and the verdict against [0.94, 0.96] allowing
for it (met when the band coverage ± 2 MC s.e. meets the target); the saving (1 - the design's mean reported
variance over the judges-only one's, per campaign, with its MC s.e.); beside it the theoretical optimum for the same
data (PPI++: rho^2 N / (N + n) of the oracle calibrated predictor; active choice: the optimal rule's formula); the
share of the optimum reached (for PPI++ every metric also against the optimum of the predictor it learned: the
rho^2 of its cross-fitted predictions with every pair's label, per campaign, averaged); sd/se (spread of the
estimates over the reported standard error: above 1, too narrow);
and the honest comparator: the median effective labelled pairs the report prints over the number a uniform draw
needs for the design's measured precision (1 within ±15%, allowing for its MC error: the needed count divides by
the estimates' variance over the campaigns, uncertain by sqrt(2 / (campaigns - 1)) relative). Then the targets,
each with its verdict.

    python bench/ppi.py [--campaigns 2000] [--pairs 2000] [--labelled 200] [--seed 2024] [--workers 1]
                        [--aucs 0.65 0.8 0.9]
"""

import argparse
import multiprocessing
import os
import sys
import time
from functools import cache, partial

import numpy as np
from scipy.special import expit, ndtri

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from reports.analysis import ppi  # noqa: E402

PARAPHRASE_SHARE = 0.68
JUDGES = 3
AUCS = (0.65, 0.8, 0.9)
TARGET = (0.94, 0.96)
CAMPAIGNS = 2000
THRESHOLD = float(ndtri(1 - PARAPHRASE_SHARE))
BLEU_ZEROS = 0.13  # MRPC: BLEU is exactly 0 on 13% of pairs
PAIRS_AND_LABELS = [2000, 200]  # the run's --pairs and --labelled (the optimal rule's theory needs their ratio)
CHUNK = 50  # campaigns computed as one array operation
SINGLES, EVERY = [0, 1, 2], [0, 1, 2, None, ppi.MEAN]
DESIGNS = (
    "judges only",
    "PPI++ best single",
    "PPI++ every metric",
    "active choice",
    "waves, oracle model",
    "optimal rule",
)


def judge_error(s):
    return 0.02 + 0.45 * np.exp(-np.abs(s - THRESHOLD) / 0.4)


def labelled_pairs(rng, n):
    """(latent s, the judges' majority label) of `n` pairs."""
    s = rng.standard_normal(n)
    truth = s > THRESHOLD
    wrong = (rng.random((n, JUDGES)) < judge_error(s)[:, None]).sum(axis=1) > JUDGES // 2
    return s, np.where(wrong, ~truth, truth).astype(float)


def metric_scores(rng, s, strengths):
    """The three metrics' scores (n, 3) of pairs with latent `s`, at signal `strengths` (3,)."""
    noise = rng.standard_normal((2, len(s))), rng.gumbel(size=len(s))
    return np.stack([_metric(j, strengths[j], s, noise) for j in range(3)], axis=-1)


def _metric(j, strength, s, noise):
    """Metric `j`'s scores: 0 a BLEU-like score, 1 a similarity, 2 a log-likelihood ratio."""
    if j == 0:  # bounded, skewed, ties at exactly 0
        return np.clip((strength * s + noise[0][0] - _bleu_zero_point(strength)) / 4, 0, 1) ** 1.5
    if j == 1:  # bounded, piled up near 1
        return expit(strength * s + noise[0][1] + 1.5) ** 3
    return strength * s + noise[1]  # unbounded, skewed noise


@cache
def _bleu_zero_point(strength):
    rng = np.random.default_rng(0)
    raw = strength * rng.standard_normal(200_000) + rng.standard_normal(200_000)
    return float(np.quantile(raw, BLEU_ZEROS))


def auc(score, y):
    from scipy.stats import rankdata

    ranks = rankdata(score)
    positive = y == 1
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@cache
def strengths_for(target):
    """Each metric's signal strength whose AUC against the judges' majority is `target` (bisection, 200,000 pairs)."""
    rng = np.random.default_rng(1)
    s, y = labelled_pairs(rng, 200_000)
    noise = rng.standard_normal((2, len(s))), rng.gumbel(size=len(s))  # the same noise at every step: monotone
    found = []
    for metric in range(3):
        low, high = 0.0, 8.0
        for _ in range(22):
            middle = (low + high) / 2
            low, high = (middle, high) if auc(_metric(metric, middle, s, noise), y) < target else (low, middle)
        found.append((low + high) / 2)
    return tuple(found)


@cache
def truth_and_oracle(target):
    """The estimand (the majority's rate over every pair), and the oracle calibrated predictor: the combined logistic
    model fitted on 200,000 pairs, with rho^2, the uncertainty's mean and the figures the optimal rule needs."""
    rng = np.random.default_rng(3)
    _s, y_big = labelled_pairs(rng, 2_000_000)
    s, y = labelled_pairs(rng, 200_000)
    scores = metric_scores(rng, s, np.array(strengths_for(target)))
    z = ppi.standardised(scores)
    x = np.c_[np.ones(len(y)), z]
    beta = ppi.logistic_fit(x, y, np.ones(len(y)), steps=30)
    f = expit(x @ beta)
    single = []
    for j in range(3):  # each metric's own calibration, for the best single metric's optimum
        columns = x[:, [0, j + 1]]
        fitted = expit(columns @ ppi.logistic_fit(columns, y, np.ones(len(y)), steps=30))
        single.append(np.corrcoef(y, fitted)[0, 1] ** 2)
    v = f * (1 - f)
    share = PAIRS_AND_LABELS[1] / PAIRS_AND_LABELS[0]
    pi = ppi.proportional_probabilities(np.sqrt(v), share * len(v))  # the optimal rule, clipped at 1
    return {
        "v_over_pi": float(np.mean(v / pi)),
        "truth": float(y_big.mean()),
        "rho2": float(np.corrcoef(y, f)[0, 1] ** 2),
        "rho2_single": float(max(single)),
        "mean_u": float(np.sqrt(v).mean()),
        "var_f": float(f.var()),
        "mean_v": float(v.mean()),
        "sigma2": float(y.var()),
        "beta": beta,
        "aucs": [auc(scores[:, j], y) for j in range(3)],
    }


def simulate(seed, start, count, pairs, labelled, aucs):
    """Per cell and design, the (estimate, se, effective pairs) of campaigns start .. start + count - 1, each from its
    own random stream (seed, i): the results do not depend on how the campaigns are split between processes."""
    found = {}
    for cell in aucs:
        strengths = np.array(strengths_for(cell))
        oracle = truth_and_oracle(cell)
        streams = [np.random.default_rng([seed, index, int(cell * 100)]) for index in range(start, start + count)]
        y, z, uniform = campaigns(streams, pairs, labelled, strengths)
        found[cell, "judges only"] = _judges_only(y, uniform)
        for design, candidates in (("PPI++ best single", SINGLES), ("PPI++ every metric", EVERY)):
            found[cell, design] = _uniform_ppi(streams, y, z, uniform, candidates)
        found[cell, "active choice"] = _waves(streams, y, z, labelled)
        f_oracle = expit(np.einsum("cnd,d->cn", np.concatenate([np.ones(y.shape + (1,)), z], axis=-1), oracle["beta"]))
        # The same waves guided by the oracle's model from the second wave on: the ceiling of any design that
        # must draw its first labels before it has a model (what is left to active choice is the model's error).
        waves = [np.random.default_rng([seed, index, int(cell * 100), 1]) for index in range(start, start + count)]
        found[cell, "waves, oracle model"] = _waves(waves, y, z, labelled, guide=f_oracle)
        pi = ppi.proportional_probabilities(np.sqrt(f_oracle * (1 - f_oracle)), np.full(len(y), float(labelled)))
        sampled = np.stack([rng.random(pairs) for rng in streams]) < pi
        found[cell, "optimal rule"] = _active_estimate(streams, y, z, sampled, pi)
    return found


def campaigns(streams, pairs, labelled, strengths):
    """One simulated campaign per random stream: every pair's label (the judges' majority), its metrics'
    standardised scores at signal `strengths`, and which `labelled` pairs a uniform draw gave the judges."""
    s_y = [labelled_pairs(rng, pairs) for rng in streams]
    y = np.stack([y for _s, y in s_y])
    z = np.stack([ppi.standardised(metric_scores(rng, s, strengths)) for rng, (s, _y) in zip(streams, s_y)])
    uniform = np.zeros(y.shape, dtype=bool)
    for row, rng in enumerate(streams):
        uniform[row, rng.choice(pairs, labelled, replace=False)] = True
    return y, z, uniform


def _judges_only(y, labelled):
    n = labelled.sum(axis=1)
    mean = np.where(labelled, y, 0).sum(axis=1) / n
    variance = np.where(labelled, (y - mean[:, None]) ** 2, 0).sum(axis=1) / n  # ppi_py's classical (ddof 0)
    se = np.sqrt(variance / n)
    return np.stack([mean, se, ppi.effective_pairs(variance, se)], axis=1)


def _folds(streams, labelled):
    return np.stack([ppi.fold_assignment(rng, row) for rng, row in zip(streams, labelled)])


def _uniform_ppi(streams, y, z, labelled, candidates):
    out_of_fold, every_pair, _chosen = ppi.cross_fit_batch(
        z, np.where(labelled, y, np.nan), labelled, _folds(streams, labelled), candidates
    )
    estimate, se, _lam = ppi.ppi_mean_closed_form(
        np.where(labelled, y, np.nan), np.where(labelled, out_of_fold, every_pair), labelled
    )
    variance = np.where(labelled, (y - _mean(y, labelled)[:, None]) ** 2, 0).sum(axis=1) / labelled.sum(axis=1)
    # The predictor PPI++ used (each pair's out-of-fold or every-fold prediction), against every pair's label: its
    # rho^2 on this campaign, from which the same formula as the oracle's gives the optimum of what was learned.
    used = np.where(labelled, out_of_fold, every_pair)
    centred_f, centred_y = used - used.mean(axis=1)[:, None], y - y.mean(axis=1)[:, None]
    rho2 = (centred_f * centred_y).sum(axis=1) ** 2 / ((centred_f**2).sum(axis=1) * (centred_y**2).sum(axis=1))
    return np.stack([estimate, se, ppi.effective_pairs(variance, se), rho2], axis=1)


def _mean(values, where):
    return np.where(where, values, 0).sum(axis=1) / where.sum(axis=1)


def _waves(streams, y, z, budget, guide=None):
    """The report's waves over each campaign: blocks at random, the first uniform, the next ones by the robust rule
    on the model of the labels so far (every metric, cross-fitted), or on `guide` (each pair's probability from a
    model known in advance) when given."""
    campaigns, pairs = y.shape
    probability = np.full(y.shape, np.nan)
    sampled = np.zeros(y.shape, dtype=bool)
    in_wave = np.zeros(y.shape, dtype=bool)
    for wave in range(1, ppi.WAVES + 1):
        remaining = (~in_wave).sum(axis=1)
        plan = [ppi.wave_plan(int(r), budget - int(d), wave) for r, d in zip(remaining, sampled.sum(axis=1))]
        block = np.zeros(y.shape, dtype=bool)
        for row, (rng, (size, _b)) in enumerate(zip(streams, plan)):
            block[row, rng.choice(np.flatnonzero(~in_wave[row]), size, replace=False)] = True
        wave_budget = np.array([b for _size, b in plan])
        if wave == 1:
            pi = np.broadcast_to((wave_budget / block.sum(axis=1))[:, None], y.shape)
        else:
            observed = np.where(sampled, y, np.nan)
            if guide is None:
                out_of_fold, every_pair, _c = ppi.cross_fit_batch(z, observed, sampled, _folds(streams, sampled), EVERY)
            else:
                out_of_fold = every_pair = guide
            u = np.sqrt(every_pair * (1 - every_pair))
            seen_u = np.where(sampled, np.sqrt(out_of_fold * (1 - out_of_fold)), np.nan)
            pi = np.full(y.shape, np.nan)
            for row in range(campaigns):  # each campaign's block has its own size
                found, _rho = ppi.robust_probabilities(
                    u[row, block[row]], wave_budget[row], seen_uncertainty=seen_u[row],
                    seen_residual=observed[row] - out_of_fold[row], seen_weight=1 / probability[row],
                )  # fmt: skip
                pi[row, block[row]] = found
        draws = np.stack([rng.random(pairs) for rng in streams])
        probability = np.where(block, pi, probability)
        sampled |= block & (draws < pi)
        in_wave |= block
    return _active_estimate(streams, y, z, sampled, probability)


def _active_estimate(streams, y, z, sampled, probability):
    observed = np.where(sampled, y, np.nan)
    out_of_fold, every_pair, _c = ppi.cross_fit_batch(z, observed, sampled, _folds(streams, sampled), EVERY)
    predicted = np.where(sampled, out_of_fold, every_pair)
    estimate, se, _lam = ppi.active_mean(observed, predicted, probability, sampled)
    variance = ppi.design_variance(observed, probability, sampled)
    return np.stack([estimate, se, ppi.effective_pairs(variance, se)], axis=1)


def run(args):
    chunks = [(start, min(CHUNK, args.campaigns - start)) for start in range(0, args.campaigns, CHUNK)]
    work = partial(_chunk, args.seed, pairs=args.pairs, labelled=args.labelled, aucs=tuple(args.aucs))
    parts = []
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        for part in pool.imap(work, chunks):  # in order: the same table for any number of workers
            parts.append(part)
            print(f"{sum(len(p[next(iter(p))]) for p in parts)} of {args.campaigns} campaigns", file=sys.stderr)
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def _chunk(seed, chunk, pairs, labelled, aucs):
    return simulate(seed, chunk[0], chunk[1], pairs, labelled, aucs)


def theory(cell, design, pairs, labelled):
    """The theoretical saving of a design over the judges-only interval, for the same data."""
    o = truth_and_oracle(cell)
    unlabelled = pairs - labelled
    if design == "PPI++ best single":
        return o["rho2_single"] * unlabelled / pairs
    if design == "PPI++ every metric":
        return o["rho2"] * unlabelled / pairs
    if design in ("active choice", "waves, oracle model", "optimal rule"):
        # pi proportional to sqrt(f (1 - f)) (clipped at 1), lambda = 1: each term f + (y - f) xi / pi has variance
        # var(f) + E[f (1 - f) / pi], over N pairs; the judges-only mean's is sigma^2 / n
        return 1 - labelled / pairs * (o["var_f"] + o["v_over_pi"]) / o["sigma2"]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=CAMPAIGNS)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--labelled", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--workers", type=int, default=1, help="processes (the results are the same for any number)")
    parser.add_argument("--aucs", type=float, nargs="+", default=list(AUCS), help="the cells' AUC against the majority")
    args = parser.parse_args()
    PAIRS_AND_LABELS[:] = [args.pairs, args.labelled]
    started = time.perf_counter()
    results = run(args)
    elapsed = time.perf_counter() - started
    print(
        f"{args.campaigns} campaigns per cell of {args.pairs} pairs, {args.labelled} labelled (expected, for active "
        f"choice), seed {args.seed}, {elapsed:.0f} s on {args.workers} process(es)"
    )
    verdicts = []
    for cell in args.aucs:
        o = truth_and_oracle(cell)
        print(
            f"\ncell AUC {cell:.2f} against the majority (measured: {', '.join(f'{a:.3f}' for a in o['aucs'])}); "
            f"true rate {o['truth']:.4f}; oracle rho^2: every metric {o['rho2']:.3f}, "
            f"best single {o['rho2_single']:.3f}"
        )
        print(
            f"{'design':<19} {'coverage':>8} {'± MC':>6} {'verdict':<7} {'saving':>7} {'± MC':>6} {'optimum':>8} "
            f"{'reached':>7} {'sd/se':>6} {'eff. reported / needed':>22}"
        )
        human_var = results[cell, "judges only"][:, 1] ** 2
        savings = {}
        for design in DESIGNS:
            estimate, se, effective = results[cell, design][:, :3].T
            covered = np.abs(estimate - o["truth"]) <= ppi.Z95 * se
            coverage = covered.mean()
            mc = np.sqrt(coverage * (1 - coverage) / len(covered))
            met = coverage + 2 * mc >= TARGET[0] and coverage - 2 * mc <= TARGET[1]
            verdicts.append((f"coverage {design} at AUC {cell}", met, f"{coverage:.4f} ± {mc:.4f}"))
            ratio = se**2 / human_var
            savings[design] = ratio
            saving, saving_mc = 1 - ratio.mean(), ratio.std(ddof=1) / np.sqrt(len(ratio))
            optimum = theory(cell, design, args.pairs, args.labelled)
            reached = f"{saving / optimum:>7.0%}" if optimum else f"{'–':>7}"
            spread = estimate.std(ddof=1)
            needed = o["truth"] * (1 - o["truth"]) / spread**2  # a uniform draw's count for this precision
            honest = np.median(effective) / needed
            print(
                f"{design:<19} {coverage:>8.4f} {mc:>6.4f} {'met' if met else 'MISSED':<7} {saving:>7.1%} "
                f"{saving_mc:>6.1%} {'–' if optimum is None else f'{optimum:.1%}':>8} {reached} "
                f"{spread / np.sqrt(np.mean(se**2)):>6.3f} {honest:>22.2f}"
            )
            if design != "judges only":
                # `needed` divides by a variance measured over the campaigns: relative MC error sqrt(2 / (C - 1))
                noise = np.sqrt(2 / (len(estimate) - 1))
                verdicts.append((f"effective pairs honest ({design}, AUC {cell})", abs(honest - 1) <= 0.15 + 2 *
                                 noise, f"{honest:.2f} ± {noise:.2f}"))  # fmt: skip
        best = savings["PPI++ every metric"]
        optimum = theory(cell, "PPI++ every metric", args.pairs, args.labelled)
        reached = 1 - best.mean()
        verdicts.append((f"PPI++ >= 90% of its optimum (oracle predictor), AUC {cell}", reached >= 0.9 * optimum - 2 *
                         best.std() / np.sqrt(len(best)), f"{reached:.1%} of {optimum:.1%}"))  # fmt: skip
        own = results[cell, "PPI++ every metric"][:, 3].mean() * (args.pairs - args.labelled) / args.pairs
        verdicts.append((f"PPI++ >= 90% of its optimum (the predictor it learned), AUC {cell}", reached >= 0.9 * own -
                         2 * best.std() / np.sqrt(len(best)), f"{reached:.1%} of {own:.1%}"))  # fmt: skip
        print(
            f"PPI++ every metric: its cross-fitted predictor's rho^2 with the labels, over each campaign's pairs, "
            f"averages {results[cell, 'PPI++ every metric'][:, 3].mean():.3f} (the oracle's {o['rho2']:.3f}): "
            f"optimum {own:.1%}, reached {reached / own:.0%}"
        )
        difference = savings["PPI++ every metric"] - savings["active choice"]  # paired: > 0, active saves more
        d_mean, d_mc = difference.mean(), difference.std(ddof=1) / np.sqrt(len(difference))
        verdicts.append((f"active >= uniform PPI++ within MC error, AUC {cell}", d_mean + 2 * d_mc >= 0,
                         f"{-d_mean:+.1%} ± {d_mc:.1%} of the judges-only variance"))  # fmt: skip
        active_saving, optimal_saving = 1 - savings["active choice"].mean(), 1 - savings["optimal rule"].mean()
        verdicts.append((f"active >= 95% of the optimal rule's saving, AUC {cell}", active_saving >= 0.95 *
                         optimal_saving, f"{active_saving:.1%} of {optimal_saving:.1%}"))  # fmt: skip
        ceiling = 1 - savings["waves, oracle model"].mean()
        print(
            f"active choice saves {active_saving:.1%}; its waves guided by the oracle's model {ceiling:.1%} "
            f"({ceiling / optimal_saving:.0%} of the optimal rule's {optimal_saving:.1%}: the ceiling of waves that "
            f"learn their model from their own first labels); active choice reaches {active_saving / ceiling:.0%} of it"
        )
        single = 1 - savings["PPI++ best single"].mean()
        print(f"every metric combined saves {reached:.1%}, the best single metric {single:.1%}")
    print("\ntargets:")
    for name, met, figure in verdicts:
        print(f"  {'met   ' if met else 'MISSED'} {name}: {figure}")


if __name__ == "__main__":
    main()
