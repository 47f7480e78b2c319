"""PEM's multi-criteria judgments: adequacy, fluency, lexical dissimilarity and overall, each on 1–5.

Tables after PEM (Liu et al., section 5): criterion means by system, inter-judge Pearson at
sentence and system level (Table 1: pairwise between judges' vectors on shared items,
then averaged), each criterion's correlation with Overall (Table 2, with dissimilarity
also restricted to pairs rated adequacy and fluency >= 4), every metric against Overall and
Adequacy at both levels, Krippendorff's alpha (interval) per criterion, and `pem_fit`: an
RBF support-vector regression from the campaign's metric scores to Overall, scored by the
Pearson correlation of its k-fold cross-validated predictions (never stored per pair).
"""

from itertools import combinations

import krippendorff
import numpy as np
import pandas as pd
from scipy import stats
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from annotation.criteria_scale import CRITERIA
from reports.analysis.common import orient

HIGH_RATING = 4  # PEM's "adequacy and fluency of at least four"


def _pearson(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(stats.pearsonr(x, y)[0])


def pair_means(judgments: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per pair: the mean of each criterion over its judges, with the pair's system and metric columns."""
    means = judgments.groupby("pair_id")[CRITERIA].mean()
    frame = pairs.set_index("pair_id")
    return frame.join(means, how="inner")


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


def criteria_vs_overall(judgments, pairs) -> pd.DataFrame:
    """PEM Table 2: each criterion's Pearson with Overall over pair means and over system means."""
    means = pair_means(judgments, pairs)
    rows = [_levels(criterion, means, criterion, "overall") for criterion in CRITERIA if criterion != "overall"]
    high = means[(means["adequacy"] >= HIGH_RATING) & (means["fluency"] >= HIGH_RATING)]
    rows.append(_levels(f"dissimilarity (adequacy, fluency ≥ {HIGH_RATING})", high, "dissimilarity", "overall"))
    return pd.DataFrame(rows, columns=["row", "n_pairs", "sentence_level", "n_systems", "system_level"])


def _levels(name, means, x, y) -> dict:
    systems = means.groupby("system")[[x, y]].mean().dropna()
    return {
        "row": name,
        "n_pairs": int(means[[x, y]].dropna().shape[0]),
        "sentence_level": _pearson(means[x], means[y]),
        "n_systems": len(systems),
        "system_level": _pearson(systems[x], systems[y]),
    }


def metrics_vs_criteria(judgments, pairs, metrics, directions) -> pd.DataFrame:
    """Every metric (oriented: higher = closer) against Overall and Adequacy, at sentence and system level."""
    means = pair_means(judgments, pairs)
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


def pem_fit(judgments, pairs, metrics, folds=5, seed=0) -> dict:
    """SVR (RBF) from the metric scores to mean Overall, with k-fold cross-validated predictions.

    Returns the number of pairs used, the folds, and the Pearson correlation of the held-out
    predictions with the human Overall at sentence and system level; None below 2 folds' worth.
    """
    means = pair_means(judgments, pairs).dropna(subset=[*metrics, "overall"])
    if len(metrics) == 0 or len(means) < max(2 * folds, 10):
        return {"n_pairs": len(means), "folds": folds, "sentence_level": np.nan, "system_level": np.nan}
    model = make_pipeline(StandardScaler(), SVR(kernel="rbf"))
    splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    predicted = cross_val_predict(model, means[metrics].to_numpy(float), means["overall"].to_numpy(float), cv=splitter)
    means = means.assign(predicted=predicted)
    systems = means.groupby("system")[["predicted", "overall"]].mean()
    return {
        "n_pairs": len(means),
        "folds": folds,
        "sentence_level": _pearson(means["predicted"], means["overall"]),
        "system_level": _pearson(systems["predicted"], systems["overall"]),
    }
