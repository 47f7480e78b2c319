"""Prediction-powered estimates: the judges' labels on some pairs and a metric's scores on all of them.

A metric's score on every pair predicts its label; the labelled pairs measure how wrong the
prediction is on average and correct it. The estimate stays unbiased and its interval valid
whatever the metric's quality; a good metric shrinks the interval, a useless one gives back the
human-only interval (power tuning sets its weight `lambda` to about 0).

- PPI++ with power tuning (Angelopoulos, Duchi and Zrnic 2023), computed by the authors' library
  `ppi_py` (`ppi_mean_ci`, `classical_mean_ci`) on predictions that are **cross-fitted**
  (Zrnic and Candès, cross-prediction-powered inference, 2024): the labelled pairs are split into
  folds; on the other folds a logistic calibration of each metric's score is fitted and, unless the
  researcher named one, the metric with the best fit chosen; that model predicts the held-out fold's
  labelled pairs, and every unlabelled pair gets the folds' average. No labelled pair is predicted
  by a model that saw its label, so choosing the metric does not bias the interval.
- Active choice (Zrnic and Candès, active statistical inference, ICML 2024): pairs were chosen for
  judging with known probabilities `pi`; the estimate weights each labelled pair by 1/pi
  (Horvitz-Thompson), with the same power tuning. `ppi_py` has no estimator for this design, so
  `active_mean` is written here (its unbiasedness is checked exhaustively in the tests).
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
COLUMNS = [
    "estimand", "group", "n_pairs", "n_labelled", "human", "human_low", "human_high",
    "ppi", "ppi_low", "ppi_high", "predictor", "predictor_folds", "chosen_by", "design", "lambda", "n_effective",
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


def active_mean(y, predicted, probability, sampled, *, lam=None) -> tuple[float, float, float]:
    """Active inference's estimate of the mean over all N pairs, its standard error and lambda.

    `probability`: each pair's chance of being chosen for judging (all N); `sampled`: whether it was
    (its label `y` is read only there); `predicted`: the predictor on every pair. The estimate is
    (1/N) sum [lambda f + (y - lambda f) xi / pi]; lambda minimises its estimated variance (clipped to
    [0, 1], as PPI++ does) unless given; `lam=0` is the human-only Horvitz-Thompson estimate.
    """
    f, pi = np.asarray(predicted, dtype=float), np.asarray(probability, dtype=float)
    xi = np.asarray(sampled, dtype=bool)
    weighted = np.where(xi, np.nan_to_num(np.asarray(y, dtype=float)) / pi, 0.0)  # y xi / pi
    correction = f * (1 - xi / pi)  # the part lambda multiplies
    if lam is None:
        lam = 0.0
        if np.var(correction) > 0:
            covariance = np.cov(correction, weighted)[0, 1]
            lam = float(np.clip(-covariance / np.var(correction, ddof=1), 0, 1))
    terms = weighted + lam * correction
    return float(terms.mean()), float(terms.std(ddof=1) / np.sqrt(len(terms))), lam


def active_probabilities(scores, budget, *, threshold=None, floor=0.5) -> np.ndarray:
    """Each pair's chance of being chosen for judging, `budget` pairs expected: growing with how unsure the
    metric is (sqrt(p(1 - p)), the spread active inference's optimal rule follows), never under `floor`
    times the uniform chance, never over 1.

    p is a rough guess made before any label: a logistic of the oriented score's distance to `threshold`
    (the median when none is given), in standard deviations. A poor guess costs width, never validity:
    the estimate divides by the very probabilities used. Unscored pairs get the uniform chance.
    """
    x = np.asarray(scores, dtype=float)
    scored = ~np.isnan(x)
    centre = np.nanmedian(x) if threshold is None else threshold
    spread = np.nanstd(x) or 1.0
    p = 1 / (1 + np.exp(-1.7 * (x - centre) / spread))
    uncertainty = np.where(scored, np.sqrt(p * (1 - p)), np.nan)
    uniform = min(1.0, budget / len(x))
    uncertainty = np.where(scored, uncertainty, np.nanmean(uncertainty) if scored.any() else 1.0)
    low, high = 0.0, 1.0 / max(uncertainty.min(), 1e-12)
    for _ in range(100):  # the scale whose clipped probabilities add up to the budget
        middle = (low + high) / 2
        if np.clip(middle * uncertainty, floor * uniform, 1).sum() < budget:
            low = middle
        else:
            high = middle
    return np.clip(high * uncertainty, floor * uniform, 1)


def _se(low, high) -> float:
    return float((np.ravel(high)[0] - np.ravel(low)[0]) / (2 * Z95))


# --- cross-fitted predictions ---------------------------------------------------------------


def cross_fitted(y, scores: pd.DataFrame, *, predictor=None, folds=FOLDS, seed=0, binary=True):
    """Out-of-fold predictions of the labelled pairs, the folds' average on every pair, the metric each
    fold chose.

    `y`: 0/1 with NaN where unlabelled; `scores`: one oriented column per candidate metric (NaN where
    unscored: the training folds' base rate is predicted there). `predictor`: use that metric only.
    `binary`: a logistic calibration of 0/1 labels; otherwise a linear one of a mean rating.
    """
    y = np.asarray(y, dtype=float)
    rng = np.random.default_rng(seed)
    labelled = np.flatnonzero(~np.isnan(y))
    candidates = [predictor] if predictor else list(scores.columns)
    fold_of = rng.permutation(len(labelled)) % folds
    out_of_fold = np.full(len(y), np.nan)
    every_pair = np.zeros((len(y), folds))
    chosen = []
    for fold in range(folds):
        train = labelled[fold_of != fold]
        if len(train) > MAX_FIT:  # two parameters need no more; 400,000 gold labels would cost seconds
            train = np.sort(rng.choice(train, MAX_FIT, replace=False))
        fits = [_calibrated(scores[m].to_numpy(float), y, train, binary) for m in candidates]
        best = min(range(len(fits)), key=lambda i: fits[i][0])
        chosen.append(candidates[best])
        every_pair[:, fold] = fits[best][1](scores[candidates[best]].to_numpy(float))
        held_out = labelled[fold_of == fold]
        out_of_fold[held_out] = every_pair[held_out, fold]
    return out_of_fold, every_pair.mean(axis=1), chosen


def _calibrated(x, y, train, binary):
    """(loss on the training rows, the calibration as a function of the score) of one metric: the log loss
    of a logistic fit for labels, the squared error of a linear one for ratings."""
    from sklearn.linear_model import LinearRegression, LogisticRegression

    base_rate = float(y[train].mean())
    usable = train[~np.isnan(x[train])]

    def predict(values, fitted=None, centre=0.0, spread=1.0):
        prediction = np.full(len(values), base_rate)
        scored = ~np.isnan(values)
        if fitted is not None and scored.any():
            features = ((values[scored] - centre) / spread).reshape(-1, 1)
            prediction[scored] = fitted.predict_proba(features)[:, 1] if binary else fitted.predict(features)
        return prediction

    calibration = predict
    if len(np.unique(y[usable])) >= 2 and np.ptp(x[usable]) > 0:
        centre, spread = x[usable].mean(), x[usable].std()
        model = LogisticRegression(C=1e4) if binary else LinearRegression()
        fitted = model.fit(((x[usable] - centre) / spread).reshape(-1, 1), y[usable])

        def calibration(values):
            return predict(values, fitted, centre, spread)

    trained = calibration(x[train])
    if not binary:
        return float(np.mean((y[train] - trained) ** 2)), calibration
    p = np.clip(trained, 1e-6, 1 - 1e-6)
    return float(-np.mean(y[train] * np.log(p) + (1 - y[train]) * np.log(1 - p))), calibration


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
    design, design_notes = _active_design(rows, y)
    notes += design_notes
    if design is not None:
        y = np.where(design[1], y, np.nan)  # a label outside the draw cannot be weighted: left out
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
    chosen_by["design"] = UNIFORM if design is None else ACTIVE
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
    """One group's estimates; `design`: (probability, drawn) per pair under active choice, else uniform."""
    labelled = ~np.isnan(y)
    row = {"group": name, "n_pairs": len(y), "n_labelled": int(labelled.sum())}
    if labelled.sum() < MIN_LABELLED or len(np.unique(y[labelled])) < 2:
        return row
    if design is not None:
        predicted = np.where(labelled, out_of_fold, every_pair)
        human, human_se, _ = active_mean(y, predicted, design[0], labelled, lam=0.0)
        ppi, ppi_se, lam = active_mean(y, predicted, design[0], labelled)
    elif labelled.all():  # nothing left to predict: the labels are the whole group
        human, human_se = human_mean(y)
        ppi, ppi_se, lam = human, human_se, 0.0
    else:
        human, human_se = human_mean(y[labelled])
        ppi, ppi_se, lam = ppi_mean(y[labelled], out_of_fold[labelled], every_pair[~labelled])
    row |= _interval("human", human, human_se) | _interval("ppi", ppi, ppi_se)
    return row | {
        "lambda": lam,
        "n_effective": _effective(row["n_labelled"], human_se, ppi_se),
        "se": (human_se, ppi_se),
    }


def _active_design(rows, y):
    """(probability, drawn) per pair when the pairs were drawn by active choice, else None; and notes.

    While a campaign is in progress only some drawn pairs have labels: each pair's probability is then
    thinned by the share of drawn pairs labelled so far (assuming, as the least-judged-first order makes
    nearly true, that the drawn pairs are judged in random order); exact once every drawn pair is labelled.
    """
    if "choice_probability" not in rows or not rows["choice_probability"].notna().any():
        return None, []
    probability = rows["choice_probability"].to_numpy(float)
    if np.isnan(probability).any():
        return None, ["Some pairs were not drawn by active choice (campaigns of both designs): unweighted estimates."]
    drawn = rows["chosen"].fillna(False).to_numpy(bool)
    labelled = drawn & ~np.isnan(y)
    done = labelled.sum() / max(drawn.sum(), 1)
    notes = []
    if done < 1:
        notes.append(
            f"Active choice: {int(labelled.sum())} of {int(drawn.sum())} drawn pairs labelled so far; the weights "
            "assume the rest are labelled in random order."
        )
    return (probability * done, labelled), notes


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
    return row | {"n_effective": _effective(row["n_labelled"], human_se, ppi_se)}


def _interval(prefix, estimate, se):
    return {prefix: estimate, f"{prefix}_low": estimate - Z95 * se, f"{prefix}_high": estimate + Z95 * se}


def _effective(n, human_se, ppi_se):
    """The human-only sample size with the prediction-powered interval's width: widths go as 1/sqrt(n)."""
    if not ppi_se > 0:
        return np.nan
    return float(n * (human_se / ppi_se) ** 2)


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
    design, notes = _active_design(rows, y)
    if design is not None:
        y = np.where(design[1], y, np.nan)
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
