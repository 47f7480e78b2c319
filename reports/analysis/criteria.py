"""PEM's multi-criteria judgments: adequacy, fluency, lexical dissimilarity and overall, each on 1–5.

Tables after PEM (Liu et al., section 5): criterion means by system, inter-judge Pearson at
sentence and system level (Table 1: pairwise between judges' vectors on shared items,
then averaged; judges only), each criterion's correlation with Overall (Table 2, with
dissimilarity also restricted to pairs rated adequacy and fluency >= 4), every metric against
Overall and Adequacy at both levels, Krippendorff's alpha (interval) per criterion, and
`pem_fit`: an RBF support-vector regression from metric scores to Overall, scored by the
Pearson correlation of its held-out predictions, with train and test split by *source*.

From PEM's section 5.2 on, the human reference is the judges' mean joined by the three
artificial control systems with their fixed ratings (`controls`: one row per control pair,
with `pair_id`, `source`, `system`, the metric columns and one column per criterion); every
function that takes `controls` can leave them out by passing None.
"""

from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd

from annotation.tasktypes.criteria.scale import CRITERIA
from metrics.pem import fit_svr, predict_svr
from reports.analysis.common import orient, scipy_stats
from reports.analysis.systems import system_correlation

HIGH_RATING = 4  # PEM's "adequacy and fluency of at least four"


def _pearson(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(scipy_stats().pearsonr(x, y)[0])


SPLITS = ("sources", "paper")
PAPER_TRAIN_SHARE = 2 / 3  # PEM 6.1: the first 200 of 300 sources train, the other 100 test


def pair_means(judgments: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per pair: the mean of each criterion over its judges, with the pair's system and metric columns."""
    means = judgments.groupby("pair_id")[CRITERIA].mean()
    frame = pairs.set_index("pair_id")
    return frame.join(means, how="inner")


def human_reference(judgments, pairs, controls=None) -> pd.DataFrame:
    """PEM's human reference (5.2): the judges' mean per pair, and the control pairs with their fixed ratings."""
    means = pair_means(judgments, pairs)
    if controls is None or controls.empty:
        return means
    return pd.concat([means, controls.set_index("pair_id")])


def criteria_by_system(judgments: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per system and criterion: mean and standard deviation of the judges' ratings, and how many."""
    work = judgments.join(pairs.set_index("pair_id")["system"], on="pair_id")
    rows = []
    for system, part in work.groupby("system", sort=True):
        for criterion in CRITERIA:
            values = part[criterion].dropna()
            rows.append(
                {
                    "system": system,
                    "criterion": criterion,
                    "n": len(values),
                    "mean": values.mean(),
                    "std": values.std(ddof=1) if len(values) > 1 else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=["system", "criterion", "n", "mean", "std"])


def inter_judge_correlation(judgments, pairs, criterion="overall") -> pd.DataFrame:
    """PEM Table 1: Pearson between every two judges, on the pairs both rated and on their system means."""
    work = judgments.join(pairs.set_index("pair_id")["system"], on="pair_id")
    by_pair = work.pivot_table(index="pair_id", columns="judge", values=criterion, aggfunc="mean")
    by_system = work.pivot_table(index="system", columns="judge", values=criterion, aggfunc="mean")
    rows = []
    for first, second in combinations(sorted(by_pair.columns, key=str), 2):
        shared = by_pair[[first, second]].dropna()
        systems = by_system[[first, second]].dropna()
        rows.append(
            {
                "judge_a": first,
                "judge_b": second,
                "n_pairs": len(shared),
                "sentence_level": _pearson(shared[first], shared[second]),
                "n_systems": len(systems),
                "system_level": _pearson(systems[first], systems[second]),
            }
        )
    table = pd.DataFrame(rows, columns=["judge_a", "judge_b", "n_pairs", "sentence_level", "n_systems", "system_level"])
    return table


def criteria_vs_overall(judgments, pairs, controls=None) -> pd.DataFrame:
    """PEM Table 2: each criterion's Pearson with Overall over the human reference's pairs and system means."""
    means = human_reference(judgments, pairs, controls)
    rows = [_levels(criterion, means, criterion, "overall") for criterion in CRITERIA if criterion != "overall"]
    high = means[(means["adequacy"] >= HIGH_RATING) & (means["fluency"] >= HIGH_RATING)]
    rows.append(_levels(f"dissimilarity (adequacy, fluency ≥ {HIGH_RATING})", high, "dissimilarity", "overall"))
    return pd.DataFrame(rows, columns=["row", "n_pairs", "sentence_level", "n_systems", "system_level"])


def _levels(name, means, x, y) -> dict:
    # System means over the pairs with both values, so both sides average the same pairs.
    systems = means.dropna(subset=[x, y]).groupby("system")[[x, y]].mean()
    return {
        "row": name,
        "n_pairs": int(means[[x, y]].dropna().shape[0]),
        "sentence_level": _pearson(means[x], means[y]),
        "n_systems": len(systems),
        "system_level": _pearson(systems[x], systems[y]),
    }


def metrics_vs_criteria(judgments, pairs, metrics, directions, controls=None) -> pd.DataFrame:
    """Every metric (oriented: higher = closer) against Overall and Adequacy, at sentence and system level."""
    means = human_reference(judgments, pairs, controls)
    rows = []
    for metric in metrics:
        oriented = means.assign(**{metric: orient(means[metric].astype(float), directions.get(metric, "higher"))})
        for criterion in ("overall", "adequacy"):
            rows.append({"metric": metric, "criterion": criterion, **_levels(metric, oriented, metric, criterion)})
    return pd.DataFrame(rows, columns=["metric", "criterion", "n_pairs", "sentence_level", "n_systems", "system_level"])


def alpha_per_criterion(judgments) -> pd.DataFrame:
    """Krippendorff's alpha (interval) per criterion over judges x pairs; NaN with fewer than two ratings of a pair."""
    rows = []
    for criterion in CRITERIA:
        matrix = judgments.pivot_table(index="judge", columns="pair_id", values=criterion, aggfunc="mean")
        shared = matrix.loc[:, matrix.notna().sum() >= 2]
        alpha = np.nan
        if shared.shape[1] and np.nanstd(shared.to_numpy(float)) > 0:
            alpha = krippendorff.alpha(shared.to_numpy(float), level_of_measurement="interval")
        rows.append({"criterion": criterion, "n_pairs": shared.shape[1], "alpha_interval": alpha})
    return pd.DataFrame(rows, columns=["criterion", "n_pairs", "alpha_interval"])


def criteria_system_correlation(judgments, pairs, metrics, directions, controls=None, n_bootstrap=1000, seed=0):
    """Each metric's system means against the systems' mean Overall and Adequacy (human reference), CIs over sources."""
    means = human_reference(judgments, pairs, controls).reset_index()
    tables = [
        system_correlation(means, metrics, directions, n_bootstrap, seed, human=criterion).assign(criterion=criterion)
        for criterion in ("overall", "adequacy")
    ]
    table = pd.concat(tables, ignore_index=True)
    return table[["metric", "criterion", *[c for c in table.columns if c not in ("metric", "criterion")]]]


def source_split(sources: pd.Series, split="sources", folds=5):
    """(train, test) position arrays: GroupKFold over sources, or PEM's fixed split (first 2/3 of sources train).

    The paper's split takes sources in order of first appearance: on its 300 sources, the
    first 200 train and the other 100 test (6.1). Paraphrases of one source never sit on both sides.
    """
    if split == "paper":
        order = list(dict.fromkeys(sources))
        train_sources = set(order[: round(len(order) * PAPER_TRAIN_SHARE)])
        train = np.flatnonzero(sources.isin(train_sources).to_numpy())
        test = np.flatnonzero(~sources.isin(train_sources).to_numpy())
        return [(train, test)]
    if split != "sources":
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    from sklearn.model_selection import GroupKFold  # scikit-learn loads scipy.stats: imported when used

    return list(GroupKFold(n_splits=folds).split(np.zeros(len(sources)), groups=sources.to_numpy()))


def held_out_predictions(means, metrics, split="sources", folds=5) -> pd.Series:
    """The SVR's prediction of Overall for each pair while its source was held out (NaN for training-only pairs)."""
    features, targets = means[metrics].to_numpy(float), means["overall"].to_numpy(float)
    predicted = np.full(len(means), np.nan)
    for train, test in source_split(means["source"].astype(str), split, folds):
        predicted[test] = predict_svr(fit_svr(features[train], targets[train]), features[test])
    return pd.Series(predicted, index=means.index)


def _held_out(judgments, pairs, metrics, folds, split, controls):
    """(the human reference's pairs with every metric, those pairs with held-out predictions or None).

    None when there is nothing to test: no metric, fewer than 10 pairs, or fewer sources than
    the split needs (`folds` with source folds, 3 with the paper's split).
    """
    means = human_reference(judgments, pairs, controls).dropna(subset=[*metrics, "overall"])
    n_sources = means["source"].nunique() if "source" in means else 0
    if not metrics or len(means) < 10 or n_sources < (folds if split == "sources" else 3):
        return means, None
    return means, means.assign(predicted=held_out_predictions(means, metrics, split, folds)).dropna(
        subset=["predicted"]
    )


def pem_fit(judgments, pairs, metrics, folds=5, split="sources", controls=None) -> dict:
    """RBF SVR from `metrics` to the human reference's Overall, judged on held-out sources.

    Returns the split, pairs and sources used, and the Pearson correlation of the held-out
    predictions with Overall at sentence and system level; NaN when there are too few
    sources (fewer than `folds`, or than 3 with the paper's split) or pairs (10).
    """
    means, tested = _held_out(judgments, pairs, metrics, folds, split, controls)
    n_sources = int(means["source"].nunique()) if "source" in means else 0
    result = {"split": split, "folds": folds if split == "sources" else 1, "n_pairs": len(means)}
    result |= {"n_sources": n_sources, "n_test_pairs": 0, "sentence_level": np.nan, "system_level": np.nan}
    if tested is None:
        return result
    systems = tested.groupby("system")[["predicted", "overall"]].mean()
    return result | {
        "n_test_pairs": len(tested),
        "sentence_level": _pearson(tested["predicted"], tested["overall"]),
        "system_level": _pearson(systems["predicted"], systems["overall"]),
    }


def pem_vs_judges(judgments, pairs, metrics, folds=5, split="sources", controls=None) -> pd.DataFrame:
    """PEM Table 3: held-out predictions against the human mean (controls in) and each judge (controls out)."""
    columns = ["reference", "n_pairs", "sentence_level", "n_systems", "system_level"]
    _means, tested = _held_out(judgments, pairs, metrics, folds, split, controls)
    if tested is None:
        return pd.DataFrame(columns=columns)
    rows = [{"reference": "human mean", **_levels("", tested, "predicted", "overall")}]
    for judge, own in judgments.groupby("judge", sort=True):
        # Each judge's own ratings; control pairs have none, so they drop out here as in the paper.
        scored = tested.join(own.groupby("pair_id")["overall"].mean().rename("judge_overall"), how="inner")
        rows.append({"reference": f"judge {judge}", **_levels("", scored, "predicted", "judge_overall")})
    return pd.DataFrame(rows).drop(columns="row")[columns]


def fit_pem_model(judgments, pairs, features, folds=5, split="sources", controls=None) -> tuple[dict, dict]:
    """(SVR params, evaluation): the model a `pem` metric stores, and its held-out correlations.

    With source folds the stored model is fitted on every pair (the folds only measure it);
    with the paper's split it is the model fitted on the training sources, as in 6.1.
    """
    evaluation = pem_fit(judgments, pairs, features, folds, split, controls)
    if np.isnan(evaluation["sentence_level"]):
        raise ValueError(
            f"too little data to fit PEM: {evaluation['n_pairs']} rated and scored pairs over "
            f"{evaluation['n_sources']} sources (at least 10 pairs and {folds if split == 'sources' else 3} sources)"
        )
    means = human_reference(judgments, pairs, controls).dropna(subset=[*features, "overall"])
    train = source_split(means["source"].astype(str), split, folds)[0][0] if split == "paper" else slice(None)
    chosen = means.iloc[train]
    params = fit_svr(chosen[list(features)].to_numpy(float), chosen["overall"].to_numpy(float))
    return params, evaluation | {"n_train_pairs": len(chosen)}
