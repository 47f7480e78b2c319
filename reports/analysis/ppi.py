"""Prediction-powered estimates: the judges' labels on some pairs and a metric's scores on all of them.

A metric's score on every pair predicts its label; the labelled pairs measure how wrong the
prediction is on average and correct it. The estimate stays unbiased and its interval valid
whatever the metric's quality; a good metric shrinks the interval, a useless one gives back the
human-only interval (power tuning sets its weight `lambda` to about 0).

- PPI++ with power tuning (Angelopoulos, Duchi and Zrnic 2023), computed by the authors' library
  `ppi_py` (`ppi_mean_ci`, `classical_mean_ci`) on predictions that are **cross-fitted**
  (Zrnic and Candès, cross-prediction-powered inference, 2024): the labelled pairs are split into
  folds; on the other folds each candidate predictor (each metric alone, every metric combined, and
  the mean of every metric's standardised score, one slope learned better from few labels than one per
  metric) is a regularised logistic regression of the label on the scores, the one with the least
  cross-fitted loss within those folds chosen, unless the researcher named a metric; that model
  predicts the held-out fold's labelled pairs, and every unlabelled pair gets the folds' average.
  No labelled pair is predicted by, or chooses, a model that saw its label.
- Active choice (Zrnic and Candès, active statistical inference, ICML 2024): pairs were drawn for
  judging in waves with known probabilities `pi` (`robust_probabilities`); the estimate weights each
  labelled pair by 1/pi with the same power tuning (`active_mean`: `ppi_py` has no estimator for
  this design; its unbiasedness is checked exhaustively in the tests); the judges-only one is
  Hájek's (`hajek_mean`).
- Effective labelled pairs, in every design: how many uniformly drawn judged pairs a classical
  interval would need to be as narrow (`effective_pairs`).
"""

import warnings
from functools import cache

import numpy as np
import pandas as pd

from reports.analysis.common import orient

Z95 = 1.959963984540054  # the normal quantile of a two-sided 95% interval
FOLDS = 5
MAX_FIT = 20_000  # labelled pairs a calibration is fitted on at most (a seeded sample beyond)
MIN_LABELLED = 10  # fewer labelled pairs in a group: no interval (a CLT interval on a handful says nothing)
ALL_PAIRS = "All pairs"
CHOSEN, NAMED, EVERY_PAIR = "cross-fitted choice", "researcher's choice", "every pair labelled"
UNIFORM, ACTIVE = "uniform", "active"
ACTIVE_DESIGN = ["choice_probability", "chosen", "choice_wave"]  # the columns active choice's weights are read from
# Under active choice with fewer labels the weighted intervals run narrow: bench/ppi.py's simulation covered 92.1%
# (± 0.9%) for a nominal 95% at 100 labels of 500 pairs, and 94.8–95.1% at 200 of 2,000 (docs: Fewer judgments).
ACTIVE_FEW_LABELS = 200
COLUMNS = [
    "estimand", "group", "n_pairs", "n_labelled", "human", "human_low", "human_high",
    "ppi", "ppi_low", "ppi_high", "predictor", "predictor_folds", "chosen_by", "design", "lambda", "n_effective",
    "predictor_inputs", "n_scored", "n_total",
]  # fmt: skip


@cache
def ppi_library():
    """ppi_py, imported on first use (numba and statsmodels cost seconds) and without its side effect:
    importing it turns every warning off for the whole process, so its filters are put back."""
    with warnings.catch_warnings():
        import ppi_py
    return ppi_py


# --- the estimators -------------------------------------------------------------------------


def human_mean(y) -> tuple[float, float]:
    """The labelled pairs' mean and its standard error (ppi_py's classical interval, read back)."""
    y = np.asarray(y, dtype=float)
    low, high = ppi_library().classical_mean_ci(y, alpha=1 - 0.95)
    return float(y.mean()), _se(low, high)


def ppi_mean(y, predicted, predicted_unlabelled) -> tuple[float, float, float]:
    """PPI++ (power-tuned) estimate, its standard error and the tuned lambda."""
    library = ppi_library()
    y, yhat, unlabelled = (np.asarray(a, dtype=float) for a in (y, predicted, predicted_unlabelled))
    lam = _tuned_lambda(library, y, yhat, unlabelled)
    estimate = library.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)
    low, high = library.ppi_mean_ci(y, yhat, unlabelled, alpha=1 - 0.95, lam=lam)
    return float(np.ravel(estimate)[0]), _se(low, high), lam


def _tuned_lambda(library, y, yhat, unlabelled):
    """The lambda `ppi_mean_ci` tunes itself (its own private function, so the point estimate and the
    interval provably use the same one)."""
    centre = library.ppi_mean_pointestimate(y, yhat, unlabelled, lam=1)
    grads, grads_hat, grads_unl = (np.reshape(a - centre, (-1, 1)) for a in (y, yhat, unlabelled))
    return float(library.ppi._calc_lam_glm(grads, grads_hat, grads_unl, np.eye(1), clip=True))


def active_mean(y, predicted, probability, sampled, *, lam=None):
    """Active inference's estimate of the mean over all N pairs, its standard error and lambda.

    `probability`: each pair's chance of being chosen for judging (all N); `sampled`: whether it was
    (its label `y` is read only there); `predicted`: the predictor on every pair. The estimate is
    (1/N) sum [lambda f + (y - lambda f) xi / pi]; lambda minimises its estimated variance (clipped to
    [0, 1], as PPI++ does) unless given. Vectorised: campaigns along the leading axes, pairs along the last.
    """
    f, pi = np.asarray(predicted, dtype=float), np.asarray(probability, dtype=float)
    xi = np.asarray(sampled, dtype=bool)
    weighted = np.where(xi, np.nan_to_num(np.asarray(y, dtype=float)) / np.where(xi, pi, 1), 0.0)  # y xi / pi
    correction = f * (1 - xi / pi)  # the part lambda multiplies
    if lam is None:
        centred = correction - correction.mean(axis=-1, keepdims=True)
        spread = (centred**2).sum(axis=-1)
        covariance = (centred * (weighted - weighted.mean(axis=-1, keepdims=True))).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            lam = np.where(spread > 0, np.clip(-covariance / np.where(spread > 0, spread, 1), 0, 1), 0.0)
    lam = np.asarray(lam, dtype=float)
    terms = weighted + lam[..., None] * correction
    se = terms.std(axis=-1, ddof=1) / np.sqrt(terms.shape[-1])
    return _scalars(terms.mean(axis=-1), se, lam)


def hajek_mean(y, probability, sampled):
    """The judges-only estimate under unequal probabilities: Hájek's ratio sum(y / pi) / sum(1 / pi) over
    the labelled pairs, and its linearised standard error (the terms xi (y - mean) / pi over all N pairs,
    as `active_mean`'s). Design-consistent; unlike Horvitz-Thompson's it does not carry the noise of
    how many pairs the draw happened to take. Vectorised like `active_mean`."""
    pi, xi = np.asarray(probability, dtype=float), np.asarray(sampled, dtype=bool)
    weight = np.where(xi, 1 / np.where(xi, pi, 1), 0.0)
    y = np.nan_to_num(np.asarray(y, dtype=float))
    estimate = (weight * y).sum(axis=-1) / weight.sum(axis=-1)
    terms = weight * (y - estimate[..., None]) * len(y.T) / weight.sum(axis=-1)[..., None]
    se = terms.std(axis=-1, ddof=1) / np.sqrt(terms.shape[-1])
    return _scalars(estimate, se)


def design_variance(y, probability, sampled):
    """The variance of one label over the whole campaign, estimated under the design (each labelled pair
    weighted by 1 / pi): what a uniform sample's classical interval divides by its size."""
    pi, xi = np.asarray(probability, dtype=float), np.asarray(sampled, dtype=bool)
    weight = np.where(xi, 1 / np.where(xi, pi, 1), 0.0)
    y = np.nan_to_num(np.asarray(y, dtype=float))
    mean = (weight * y).sum(axis=-1, keepdims=True) / weight.sum(axis=-1, keepdims=True)
    return _scalars((weight * (y - mean) ** 2).sum(axis=-1) / weight.sum(axis=-1))


def effective_pairs(variance, se):
    """The number of uniformly drawn judged pairs whose classical interval would be as narrow as one of
    standard error `se`: variance / se^2 (a classical interval's variance is the labels' over n)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.asarray(se) > 0, np.asarray(variance) / np.asarray(se) ** 2, np.nan)


def _scalars(*arrays):
    """Floats for one campaign (0-d arrays), arrays for many."""
    found = tuple(float(a) if np.ndim(a) == 0 else a for a in arrays)
    return found if len(found) > 1 else found[0]


def ppi_mean_closed_form(y, predicted, labelled):
    """PPI++ (power-tuned) as `ppi_mean` computes it with ppi_py, in closed form and vectorised over campaigns
    (leading axes; `labelled` marks each campaign's labelled pairs, the rest are unlabelled): estimate, se,
    lambda. For the bench's thousands of campaigns; a test holds it equal to `ppi_mean`."""
    xi = np.asarray(labelled, dtype=bool)
    y, f = np.nan_to_num(np.asarray(y, dtype=float)), np.asarray(predicted, dtype=float)
    n, m = xi.sum(axis=-1), (~xi).sum(axis=-1)

    def mean(values, where):
        return np.where(where, values, 0).sum(axis=-1) / where.sum(axis=-1)

    f_lab, f_unl, y_lab = mean(f, xi), mean(f, ~xi), mean(y, xi)
    f_all = (n * f_lab + m * f_unl) / (n + m)
    # ppi_py's _calc_lam_glm: the labelled pairs' covariance of (y, f) (over n) on the pooled variance of f
    covariance = mean((y - y_lab[..., None]) * (f - f_lab[..., None]), xi)
    pooled = ((f - f_all[..., None]) ** 2).sum(axis=-1) / (n + m - 1)
    lam = np.clip(covariance / ((1 + n / m) * pooled), 0, 1)
    residual = y - lam[..., None] * f
    estimate = lam * f_unl + mean(residual, xi)
    variance = mean((lam[..., None] * f - (lam * f_unl)[..., None]) ** 2, ~xi) / m
    variance += mean((residual - mean(residual, xi)[..., None]) ** 2, xi) / n
    return _scalars(estimate, np.sqrt(variance), lam)


# --- the choice of pairs: waves --------------------------------------------------------------

WAVES = 3  # active choice's waves: a uniform first one, then two guided by the labels so far
FIRST_WAVE_SHARE = 1 / 3  # the uniform first wave's share of the pairs and of the budget


def wave_plan(remaining, left, wave, waves=None):
    """(how many of the `remaining` pairs (in no wave yet) fall into wave `wave`'s block, the wave's budget): the
    first wave spends FIRST_WAVE_SHARE of the budget on that share of the pairs, each later one an equal share of
    what is `left` on an equal share of the remaining pairs, so every block is drawn at the same uniform rate; the
    last wave takes every remaining pair and what is left."""
    waves = WAVES if waves is None else waves
    if wave >= waves:
        share = 1.0
    elif wave == 1:
        share = FIRST_WAVE_SHARE
    else:
        share = 1 / (waves - wave + 1)
    return int(round(remaining * share)), max(left, 0) * share


RHO_GRID = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])  # the robust rule's shares of uniform


def proportional_probabilities(uncertainty, budget):
    """Probabilities proportional to `uncertainty`, `budget` in expectation, none over 1 (the excess of a
    capped pair spread over the others). Vectorised: one budget per row of a 2-D `uncertainty`."""
    u = np.atleast_2d(np.asarray(uncertainty, dtype=float))
    budget = np.broadcast_to(np.asarray(budget, dtype=float), u.shape[:1])
    low = np.zeros(len(u))
    high = np.full(len(u), 1.0) / np.maximum(u.min(axis=1), 1e-12)
    for _ in range(60):  # the scale whose clipped probabilities add up to the budget
        middle = (low + high) / 2
        short = np.clip(middle[:, None] * u, 0, 1).sum(axis=1) < budget
        low, high = np.where(short, middle, low), np.where(short, high, middle)
    found = np.clip(high[:, None] * u, 0, 1)
    return found if np.ndim(uncertainty) == 2 else found[0]


def robust_probabilities(uncertainty, budget, *, seen_uncertainty, seen_residual, seen_weight):
    """A wave's probabilities by the robust rule of Li, Zrnic and Candès (2025): the optimal rule of Zrnic and
    Candès (2024), pi proportional to the calibrated model's uncertainty sqrt(p (1 - p)), mixed with the uniform
    chance, pi = (1 - rho) pi_optimal + rho budget / n; rho is the one of `RHO_GRID` whose estimated variance is
    least: the mean of (y - f)^2 / pi_rho over the pairs labelled so far (`seen_*`: their uncertainty, their
    out-of-fold residual y - f, and their weight 1 / pi to stand for the whole campaign). A model whose
    uncertainty is wrong shows it there, and rho goes to 1: never worse than uniform, up to that estimate.
    Returns (probabilities, rho); 2-D inputs are many campaigns (rows)."""
    u = np.atleast_2d(np.asarray(uncertainty, dtype=float))
    optimal = proportional_probabilities(u, budget)
    scale = np.nanmax(np.where(optimal < 1, optimal / np.maximum(u, 1e-12), np.nan), axis=1, initial=0)
    uniform = np.minimum(1.0, np.asarray(budget, dtype=float) / u.shape[1])
    seen_u, seen_r2, seen_w = (np.atleast_2d(np.asarray(a, dtype=float)) for a in
                               (seen_uncertainty, seen_residual**2, seen_weight))  # fmt: skip
    seen_optimal = np.minimum(1.0, scale[:, None] * seen_u)
    variance = np.stack([
        np.nansum(seen_w * seen_r2 / ((1 - rho) * seen_optimal + rho * uniform[..., None]), axis=1) for rho in RHO_GRID
    ])  # fmt: skip
    rho = RHO_GRID[np.argmin(variance, axis=0)]
    found = (1 - rho[:, None]) * optimal + rho[:, None] * np.atleast_1d(uniform)[..., None]
    if np.ndim(uncertainty) == 2:
        return found, rho
    return found[0], float(rho[0])


def _se(low, high) -> float:
    return float((np.ravel(high)[0] - np.ravel(low)[0]) / (2 * Z95))


# --- cross-fitted predictions ---------------------------------------------------------------

COMBINED = "all metrics"  # the predictor fitted on every metric's score at once
AVERAGED = "all metrics averaged"  # the predictor fitted on the mean of every metric's standardised score
MEAN = "mean"  # the averaged candidate among metric indexes (`candidate_weights`)
PENALTY = 1.0  # the L2 penalty on standardised scores: scikit-learn's default C = 1
NEWTON_STEPS = 8  # from zero, Newton's method on standardised scores is converged to 1e-8 by then (tested)


def standardised(scores) -> np.ndarray:
    """Each metric's scores centred and scaled over the pairs it scored; 0 (its mean) where it did not."""
    x = np.asarray(scores, dtype=float)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        centre, spread = np.nanmean(x, axis=-2, keepdims=True), np.nanstd(x, axis=-2, keepdims=True)
        z = (x - centre) / np.where(spread > 0, spread, 1)
    return np.nan_to_num(z)


def logistic_fit(x, y, weight, *, binary=True, penalty=PENALTY, steps=NEWTON_STEPS):
    """Regularised logistic regression of `y` on `x` (`binary`; else ridge regression of ratings), vectorised:
    leading axes are separate fits, `x` (..., n, d) whose first column is the unpenalised intercept, `weight`
    (..., n) 0 for rows left out. The same fit as scikit-learn's LogisticRegression(C=1 / penalty) (a test
    holds them equal), by Newton's method so that thousands of fits run as one array operation."""
    d = x.shape[-1]
    ridge = penalty * np.diag(np.r_[0.0, np.ones(d - 1)]) + 1e-9 * np.eye(d)
    y = np.nan_to_num(y)
    xt = np.swapaxes(x, -1, -2)  # batched matrix products (BLAS), not einsum: the bench runs thousands of fits
    if not binary:
        gram = (xt * weight[..., None, :]) @ x + ridge
        return np.linalg.solve(gram, xt @ (weight * y)[..., None])[..., 0]
    beta = np.zeros(x.shape[:-2] + (d,))
    for _ in range(steps):
        p = _expit((x @ beta[..., None])[..., 0])
        gradient = (xt @ (weight * (p - y))[..., None])[..., 0] + beta @ ridge
        hessian = (xt * (weight * p * (1 - p))[..., None, :]) @ x + ridge
        beta = beta - np.linalg.solve(hessian, gradient[..., None])[..., 0]
    return beta


def _expit(eta):
    from scipy.special import expit

    return expit(eta)


def _predict(x, beta, binary):
    eta = (x @ beta[..., None])[..., 0]
    return _expit(eta) if binary else eta


def _loss(prediction, y, binary):
    if not binary:
        return (prediction - y) ** 2
    p = np.clip(prediction, 1e-6, 1 - 1e-6)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def candidate_weights(n_metrics, candidates) -> np.ndarray:
    """How each candidate predictor reads the metrics' scores (`candidates`: a metric's column index, `None` for
    every metric combined, `MEAN` for every metric averaged): (candidates, metrics, metrics) matrices taking a
    pair's standardised scores to the candidate's inputs, all of one width so that the candidates fit side by side
    (one metric: its own column, the others zero; combined: every column; averaged: the mean in the first)."""
    weights = np.zeros((len(candidates), n_metrics, n_metrics))
    for index, candidate in enumerate(candidates):
        if candidate is None:
            weights[index] = np.eye(n_metrics)
        elif candidate == MEAN:
            weights[index, :, 0] = 1 / n_metrics
        else:
            weights[index, candidate, candidate] = 1
    return weights


def candidate_designs(z, candidates):
    """The design matrix of each candidate predictor (`candidate_weights`): (..., candidates, n, 1 + metrics)."""
    return _with_intercept(z[..., None, :, :] @ candidate_weights(z.shape[-1], candidates))


def _with_intercept(x):
    return np.concatenate([np.ones(x.shape[:-1] + (1,)), x], axis=-1)


def cross_fit_batch(z, y, labelled, fold_of, candidates, *, binary=True, folds=FOLDS):
    """Cross-fitted predictions of many campaigns at once: out-of-fold on the labelled pairs, the folds'
    average on every pair, and the candidate each fold chose.

    `z` (campaigns, n, metrics) standardised scores; `y`, `labelled`, `fold_of` (campaigns, n); `candidates` as
    `candidate_designs`. Within each fold's training pairs each candidate's loss is itself cross-fitted (fitted on
    all but one other fold, scored on it), so a combination of metrics is chosen over the best single metric
    only where it predicts labels it did not see better; the chosen candidate, refitted on the training folds,
    predicts the held-out fold and every pair.
    """
    count = labelled.sum(axis=1)
    width = max(int(count.max()), 1)
    order = np.argsort(~labelled, axis=1, kind="stable")[:, :width]  # each campaign's labelled pairs first
    valid = np.arange(width)[None, :] < count[:, None]
    take = np.take_along_axis
    # Every candidate's design on the labelled pairs only; on every pair, only the chosen candidate's (below):
    # all candidates on 400,000 pairs would be hundreds of MB.
    x_lab = candidate_designs(take(z, order[:, :, None], axis=1), candidates)  # (campaigns, candidates, width, d)
    weights = candidate_weights(z.shape[-1], candidates)
    y_lab = np.nan_to_num(take(np.asarray(y, dtype=float), order, axis=1))
    fold_lab = np.where(valid, take(fold_of, order, axis=1), -1)
    out_of_fold = np.full(labelled.shape, np.nan)
    every_pair = np.zeros(labelled.shape)
    chosen = np.zeros((len(z), folds), dtype=int)
    rows = np.arange(len(z))
    for fold in range(folds):
        train = (fold_lab >= 0) & (fold_lab != fold)
        if len(candidates) > 1:
            inner = np.zeros((len(z), len(candidates)))
            for other in range(folds):
                if other == fold:
                    continue
                fit = (train & (fold_lab != other)).astype(float)[:, None, :]
                beta = logistic_fit(x_lab, y_lab[:, None, :], fit, binary=binary)
                scored = (fold_lab == other)[:, None, :]
                loss = _loss(_predict(x_lab, beta, binary), y_lab[:, None, :], binary)
                inner += np.where(scored, loss, 0).sum(axis=2)
            chosen[:, fold] = np.argmin(inner, axis=1)
        beta = logistic_fit(x_lab, y_lab[:, None, :], train.astype(float)[:, None, :], binary=binary)
        best = beta[rows, chosen[:, fold]]  # (campaigns, d)
        prediction = _predict(_with_intercept(z @ weights[chosen[:, fold]]), best, binary)
        every_pair += prediction / folds
        held_out = np.zeros(labelled.shape, dtype=bool)
        np.put_along_axis(held_out, order, (fold_lab == fold), axis=1)
        held_out &= labelled
        out_of_fold = np.where(held_out, prediction, out_of_fold)
    return out_of_fold, every_pair, chosen


def fold_assignment(rng, labelled, folds=FOLDS):
    """Each labelled pair's fold (a seeded random permutation, balanced); -1 elsewhere. One campaign (1-D)."""
    fold_of = np.full(len(labelled), -1)
    index = np.flatnonzero(labelled)
    fold_of[index] = rng.permutation(len(index)) % folds
    return fold_of


def cross_fitted(y, scores: pd.DataFrame, *, predictor=None, folds=FOLDS, seed=0, binary=True):
    """Out-of-fold predictions of the labelled pairs, the folds' average on every pair, the predictor each
    fold chose (a metric's name, `COMBINED` or `AVERAGED`).

    `y`: 0/1 with NaN where unlabelled; `scores`: one oriented column per candidate metric (NaN where unscored:
    the mean score stands in). `predictor`: use that metric only. Otherwise each metric alone and, with two or
    more, all of them combined and all of them averaged are the candidates (`cross_fit_batch`). `binary`: a
    regularised logistic calibration of 0/1 labels; otherwise a ridge regression of a mean rating.
    """
    y = np.asarray(y, dtype=float)
    rng = np.random.default_rng(seed)
    labelled = ~np.isnan(y)
    names = list(scores.columns)
    if predictor:
        candidates, titles = [names.index(predictor)], [predictor]
    else:
        candidates, titles = list(range(len(names))), list(names)
        if len(names) > 1:
            candidates, titles = candidates + [None, MEAN], titles + [COMBINED, AVERAGED]
    fold_of = fold_assignment(rng, labelled, folds)
    if labelled.sum() > MAX_FIT:  # a few parameters need no more; 400,000 gold labels would cost seconds
        kept = np.flatnonzero(labelled)
        dropped = rng.choice(kept, labelled.sum() - MAX_FIT, replace=False)
        fit_only = labelled.copy()
        fit_only[dropped] = False
    else:
        fit_only = labelled
    z = standardised(scores.to_numpy(float))[None]
    _oof, every_pair, chosen = cross_fit_batch(
        z, y[None], fit_only[None], fold_of[None], candidates, binary=binary, folds=folds
    )
    # Every labelled pair predicted by the model of the folds that did not see it (those left out of the fits
    # beyond MAX_FIT included: the folds' fits never saw them either, so any one fold's model would do).
    out_of_fold = _oof[0]
    if fit_only is not labelled:
        out_of_fold = np.where(labelled & np.isnan(out_of_fold), every_pair[0], out_of_fold)
    return out_of_fold, every_pair[0], [titles[c] for c in chosen[0]]


def predictor_inputs(name, metrics, *, binary=True) -> str:
    """The predictor in words, naming its inputs (`binary`: a logistic calibration of labels; else a ridge
    regression of mean ratings)."""
    fit = "a regularised logistic regression" if binary else "a ridge regression"
    inputs = ", ".join(metrics)
    if name == COMBINED:
        return f"every metric's score ({inputs}) combined by {fit}"
    if name == AVERAGED:
        return f"the mean of every metric's standardised score ({inputs}), calibrated by {fit}"
    return name


# --- the report's table ---------------------------------------------------------------------


def estimates_table(
    frame, metrics, directions, *, predictor=None, seed=0, folds=FOLDS, estimand="paraphrase_rate", target="paraphrase"
):
    """The paraphrase rate of all pairs, of each system and the difference of every two systems:
    human-only and prediction-powered, side by side; and notes.

    `frame`: pair_id, `target` (`paraphrase`: 1 paraphrase, 0 not, NaN unlabelled), system, one column per metric.
    Another `estimand` (a criterion's name): `target` names the column of each pair's mean rating, calibrated linearly.
    """
    binary = estimand == "paraphrase_rate"
    notes = []
    rows = frame[frame[metrics].notna().any(axis=1)] if metrics else frame.iloc[0:0]
    y = rows[target].to_numpy(float) if len(rows) else np.array([])
    n_labelled = int((~np.isnan(y)).sum())
    if not metrics or n_labelled < MIN_LABELLED or len(np.unique(y[~np.isnan(y)])) < 2:
        return pd.DataFrame(columns=COLUMNS), _why_none(metrics, n_labelled, estimand)
    if predictor is not None and predictor not in metrics:
        notes.append(f"The chosen predictor {predictor} has no scores; the best metric is chosen instead.")
        predictor = None
    design, design_notes = active_design(rows, y)
    notes += design_notes
    if design is not None:
        rows, y = rows[design[2]], np.where(design[1], y, np.nan)[design[2]]  # the waves' pairs, drawn labels
        design = (design[0][design[2]], design[1][design[2]])
    n_labelled = int((~np.isnan(y)).sum())
    if n_labelled == len(rows):  # every pair judged: the labels are the whole campaign, nothing to predict
        out_of_fold = every_pair = y
        chosen_by = {"predictor": "", "predictor_folds": 0, "chosen_by": EVERY_PAIR}
    else:
        oriented = pd.DataFrame({m: orient(rows[m].to_numpy(float), directions[m]) for m in metrics})
        out_of_fold, every_pair, chosen = cross_fitted(
            y, oriented, predictor=predictor, folds=folds, seed=seed, binary=binary
        )
        counts = pd.Series(chosen).value_counts()
        chosen_by = {"predictor": str(counts.index[0]), "predictor_folds": int(counts.iloc[0])}
        chosen_by["chosen_by"] = NAMED if predictor else CHOSEN
    name = chosen_by["predictor"]
    chosen_by |= {
        "design": UNIFORM if design is None else ACTIVE,
        "predictor_inputs": predictor_inputs(name, metrics, binary=binary) if name else "",
        # How many of the report's pairs the predictor has scores for (the others get the mean score).
        "n_scored": int(frame[name].notna().sum()) if name in frame else int(len(frame[metrics].dropna(how="all"))),
        "n_total": len(frame),
    }
    groups = [(ALL_PAIRS, np.ones(len(rows), dtype=bool))]
    systems = rows["system"].fillna("").astype(str) if "system" in rows else pd.Series("", index=rows.index)
    names = [s for s in pd.unique(systems) if s]
    groups += [(name, (systems == name).to_numpy()) for name in names]
    fitted, table = {}, []
    for name, members in groups:
        part = None if design is None else (design[0][members], design[1][members])
        row = _group_row(name, y[members], out_of_fold[members], every_pair[members], part)
        fitted[name] = row | {"estimand": estimand}
        table.append(fitted[name] | chosen_by)
    for index, a in enumerate(names):
        for b in names[index + 1 :]:
            table.append(_difference_row(fitted[a], fitted[b]) | chosen_by | {"estimand": f"{estimand}_difference"})
    result = pd.DataFrame(table, columns=COLUMNS)
    if result["ppi"].isna().any():
        notes.append(f"Groups with fewer than {MIN_LABELLED} labelled pairs (or one class only) get no interval.")
    return result, notes


def _group_row(name, y, out_of_fold, every_pair, design=None):
    """One group's estimates; `design`: (probability, labelled) per pair under active choice, else uniform.

    Under active choice the judges-only estimate is Hájek's (`hajek_mean`), the prediction-powered one active
    inference's (`active_mean`). In every design, *effective labelled pairs* is the number of uniformly drawn
    judged pairs whose classical interval would be as narrow as the prediction-powered one (`effective_pairs`).
    """
    labelled = ~np.isnan(y)
    row = {"group": name, "n_pairs": len(y), "n_labelled": int(labelled.sum())}
    if labelled.sum() < MIN_LABELLED or len(np.unique(y[labelled])) < 2:
        return row
    if design is not None:
        predicted = np.where(labelled, out_of_fold, every_pair)
        human, human_se = hajek_mean(y, design[0], labelled)
        ppi, ppi_se, lam = active_mean(y, predicted, design[0], labelled)
        variance = design_variance(y, design[0], labelled)
    elif labelled.all():  # nothing left to predict: the labels are the whole group
        human, human_se = human_mean(y)
        ppi, ppi_se, lam = human, human_se, 0.0
        variance = float(np.var(y))
    else:
        human, human_se = human_mean(y[labelled])
        ppi, ppi_se, lam = ppi_mean(y[labelled], out_of_fold[labelled], every_pair[~labelled])
        variance = float(np.var(y[labelled]))
    row |= _interval("human", human, human_se) | _interval("ppi", ppi, ppi_se)
    return row | {
        "lambda": lam,
        "n_effective": float(effective_pairs(variance, ppi_se)),
        "se": (human_se, ppi_se),
        "variance": variance,
    }


def active_design(rows, y):
    """(probability, labelled) per pair when the pairs were drawn by active choice, else None; and notes.

    Each wave's block of pairs is a uniform random share of the campaign's pairs, each pair of it drawn with its
    stored probability. Non-response: a drawn pair without a label (every answer "Don't know", a tie, or not
    answered yet) is treated as missing at random within its wave, so each pair's probability is multiplied by
    its wave's share of drawn pairs labelled (the weights of the labelled ones grow to stand for the rest);
    exact once every drawn pair is labelled.
    """
    if "choice_probability" not in rows or not rows["choice_probability"].notna().any():
        return None, []
    probability = rows["choice_probability"].to_numpy(float)
    in_wave = ~np.isnan(probability)
    if (~np.isnan(y) & ~in_wave).any():
        return None, ["Some pairs were not drawn by active choice (campaigns of both designs): unweighted estimates."]
    drawn = rows["chosen"].fillna(False).to_numpy(bool) & in_wave
    labelled = drawn & ~np.isnan(y)
    wave = rows["choice_wave"].fillna(1).to_numpy(int) if "choice_wave" in rows else np.ones(len(rows), dtype=int)
    response = np.ones(len(rows))
    notes = []
    for number in np.unique(wave[drawn]):
        members = drawn & (wave == number)
        share = labelled[members].sum() / members.sum()
        response[wave == number] = share
        if share < 1:
            notes.append(
                f"Active choice, wave {number}: {int(labelled[members].sum())} of {int(members.sum())} drawn pairs "
                'labelled so far; the weights assume the rest (not yet answered, or answered "Don\'t know" or a '
                "tie) are missing at random within the wave."
            )
    if not in_wave.all():
        notes.append(
            f"Active choice: {int(in_wave.sum())} of {len(rows)} pairs are in the waves drawn so far (a uniform "
            "random share of the campaign); the estimates are of them."
        )
    if labelled.sum() < ACTIVE_FEW_LABELS:
        notes.append(
            f"Active choice with {int(labelled.sum())} labelled pairs: on so few the weighted intervals run a little "
            "narrow (simulated campaigns with 100 labels held the true rate 92% of the time for a nominal 95%; with "
            f"{ACTIVE_FEW_LABELS}, 95%), so read them as a little optimistic."
        )
    return (np.where(in_wave, probability * np.maximum(response, 1e-12), np.nan), labelled, in_wave), notes


def _difference_row(a, b):
    """System a minus system b: their pairs are different pairs, so the two estimates' variances add."""
    row = {
        "group": f"{a['group']} − {b['group']}",
        "n_pairs": a["n_pairs"] + b["n_pairs"],
        "n_labelled": a["n_labelled"] + b["n_labelled"],
    }
    if "se" not in a or "se" not in b:
        return row
    human_se, ppi_se = np.hypot(a["se"][0], b["se"][0]), np.hypot(a["se"][1], b["se"][1])
    row |= _interval("human", a["human"] - b["human"], human_se) | _interval("ppi", a["ppi"] - b["ppi"], ppi_se)
    # A uniform sample of n judged pairs puts n N_a / N of them in a: its difference's variance is
    # (var_a N / N_a + var_b N / N_b) / n.
    total = row["n_pairs"]
    spread = a["variance"] * total / a["n_pairs"] + b["variance"] * total / b["n_pairs"]
    return row | {"n_effective": float(effective_pairs(spread, ppi_se))}


def _interval(prefix, estimate, se):
    return {prefix: estimate, f"{prefix}_low": estimate - Z95 * se, f"{prefix}_high": estimate + Z95 * se}


def _why_none(metrics, n_labelled, estimand):
    if not metrics:
        return ["Prediction-powered estimates need a metric with scores."]
    what = "labelled pairs of both classes" if estimand == "paraphrase_rate" else f"pairs rated on {estimand}"
    return [f"Prediction-powered estimates need at least {MIN_LABELLED} {what} ({n_labelled} so far)."]


# --- generation's selection stage -----------------------------------------------------------

SELECTED, UNSELECTED, SELECTION_DIFFERENCE = "selected", "unselected", "selected − unselected"
NORMAL, WILSON, NEWCOMBE, WEIGHTED = "normal", "Wilson", "Newcombe", "normal, weighted"
SELECTION_COLUMNS = [
    "generator", "template", "candidates", "n_pairs", "n_labelled", "human", "human_low", "human_high",
    "ppi", "ppi_low", "ppi_high", "predictor", "lambda", "interval",
]  # fmt: skip


def selection_table(frame, metrics, directions, *, predictor=None, seed=0, folds=FOLDS):
    """The paraphrase rate of a generation run's selected candidates against its unselected ones, by generator
    and template, human-only and prediction-powered; and notes.

    `frame`: pair_id, paraphrase, generator, template, `selected` (True/False; NA for pairs no selection decided),
    one column per metric; with active choice drawn within what the selection sent, `choice_probability`
    (the selection's chance times active choice's) and `chosen`. Judges got every selected candidate and a
    uniform random share of the unselected ones, so within each of the two groups the labelled pairs are a
    random sample of it: each group's estimate needs no weight (under active choice, each judged pair is
    weighted by one over its probability), and the metric's scores on the unjudged candidates narrow the
    interval. A group with judged pairs but too few for the normal interval gets Wilson's score interval
    from its labels alone (and a difference involving it Newcombe's, built from the two Wilson intervals).
    """
    if "selected" not in frame or not frame["selected"].notna().any():
        return pd.DataFrame(columns=SELECTION_COLUMNS), []
    rows = frame[frame["selected"].notna()].reset_index(drop=True)
    y = rows["paraphrase"].to_numpy(float)
    labelled = ~np.isnan(y)
    if not labelled.any():
        return pd.DataFrame(columns=SELECTION_COLUMNS), [
            "Selected against unselected candidates: no candidate judged yet."
        ]
    design, notes = active_design(rows, y)
    if design is not None:
        rows, y = rows[design[2]].reset_index(drop=True), np.where(design[1], y, np.nan)[design[2]]
        design = (design[0][design[2]], design[1][design[2]])
        labelled = ~np.isnan(y)
    scored = [m for m in metrics if rows[m].notna().any()]
    enough = labelled.sum() >= MIN_LABELLED and len(np.unique(y[labelled])) >= 2
    if scored and enough and not labelled.all():
        oriented = pd.DataFrame({m: orient(rows[m].to_numpy(float), directions[m]) for m in scored})
        chosen = predictor if predictor in scored else None
        out_of_fold, every_pair, picks = cross_fitted(y, oriented, predictor=chosen, folds=folds, seed=seed)
        name = str(pd.Series(picks).value_counts().index[0])
    else:  # nothing to predict with, or nothing left to predict: the judges' labels alone
        out_of_fold = every_pair = np.where(labelled, y, np.nan)
        name = ""
    selected = rows["selected"].astype(bool).to_numpy()
    table = []
    for (generator, template), members in _generator_template_groups(rows):
        fitted = {}
        for kind, wanted in ((SELECTED, selected), (UNSELECTED, ~selected)):
            part = members & wanted
            if not part.any():
                continue
            weights = None if design is None else (design[0][part], design[1][part])
            fitted[kind] = _candidate_group_row(kind, y[part], out_of_fold[part], every_pair[part], weights)
            table.append(fitted[kind] | {"generator": generator, "template": template, "candidates": kind})
        if len(fitted) == 2:
            difference = _selection_difference(fitted[SELECTED], fitted[UNSELECTED])
            table.append(
                difference | {"generator": generator, "template": template, "candidates": SELECTION_DIFFERENCE}
            )
    result = pd.DataFrame(table).assign(predictor=name).reindex(columns=SELECTION_COLUMNS)
    return result, notes + _selection_notes(result, design)


def _candidate_group_row(kind, y, out_of_fold, every_pair, design):
    """One candidate group: the normal intervals where `_group_row` can give them; otherwise, with judged
    pairs drawn uniformly, Wilson's interval on the labels alone (the prediction-powered one stays empty)."""
    row = _group_row(kind, y, out_of_fold, every_pair, design)
    if "se" in row:
        return row | {"interval": WEIGHTED if design is not None else NORMAL}
    labelled = y[~np.isnan(y)]
    if not len(labelled) or design is not None:  # unequal weights: a count's interval would not hold
        return row
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(int(labelled.sum()), len(labelled), alpha=1 - 0.95, method="wilson")
    counts = {"count": int(labelled.sum()), "nobs": len(labelled)}
    return row | {"human": float(labelled.mean()), "human_low": low, "human_high": high, "interval": WILSON, **counts}


def _selection_difference(a, b):
    """Selected minus unselected: the normal difference when both groups have one, else Newcombe's hybrid
    score interval on the two groups' counts (judges only)."""
    if "se" in a and "se" in b:
        return _difference_row(a, b) | {"interval": a["interval"]}
    row = _difference_row(a, b)
    counts = [_counts(group) for group in (a, b)]
    if None in counts:
        return row
    from statsmodels.stats.proportion import confint_proportions_2indep

    (count_a, nobs_a), (count_b, nobs_b) = counts
    low, high = confint_proportions_2indep(
        count_a, nobs_a, count_b, nobs_b, method="newcomb", compare="diff", alpha=1 - 0.95
    )
    return row | {"human": a["human"] - b["human"], "human_low": low, "human_high": high, "interval": NEWCOMBE}


def _counts(group):
    """(paraphrases, judged pairs) of a uniformly drawn group with an interval, None otherwise."""
    if group.get("interval") not in (NORMAL, WILSON):
        return None
    if "count" in group:
        return group["count"], group["nobs"]
    return int(round(group["human"] * group["n_labelled"])), group["n_labelled"]


def _selection_notes(result, design):
    notes = []
    intervals = set(result["interval"].dropna())
    if WILSON in intervals or NEWCOMBE in intervals:
        notes.append(
            f"Candidate groups with fewer than {MIN_LABELLED} judged pairs (or one class only) get Wilson's score "
            "interval from the judges' labels alone, and their difference Newcombe's hybrid score interval; "
            "no prediction-powered interval."
        )
    if result["human_low"].isna().any():
        why = "unequal weights of active choice" if design is not None else "no judged pair"
        notes.append(f"Candidate groups without an interval: {why}.")
    return notes


def _generator_template_groups(rows):
    """("All", "All") first, then each (generator, template) with candidates: (names, boolean mask)."""
    generator = rows["generator"].fillna("").astype(str) if "generator" in rows else pd.Series("", index=rows.index)
    template = rows["template"].fillna("").astype(str) if "template" in rows else pd.Series("", index=rows.index)
    groups = [((ALL_PAIRS, ALL_PAIRS), np.ones(len(rows), dtype=bool))]
    pairs = pd.unique(pd.Series(list(zip(generator, template))))
    if len(pairs) > 1:
        groups += [(key, ((generator == key[0]) & (template == key[1])).to_numpy()) for key in pairs]
    return groups
