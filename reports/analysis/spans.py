"""ParaTag's span tagging: agreement between judges and the degree of paraphrase of each pair.

A tagging marks, in each sentence, the words that have no counterpart in the other one
(0/1 per word). Agreement follows ParaTag (section 3): word-level Cohen's kappa over the
concatenated tags of every two judges' shared pairs (scikit-learn), and span F1 with
seqeval (exact span match) taking the first judge as reference, with word accuracy beside
it. The degree of a pair is its share of tagged words under the per-word majority (a word
is tagged when more than half of the pair's judges tagged it).
"""

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from annotation.tagging import SIDES, majority_word_tags
from reports.analysis.common import orient
from scoring.metrics.tag_agreement import bio as bio  # re-exported: the span tests read it here
from scoring.metrics.tag_agreement import sequence_agreement


def _sequences(rows: pd.DataFrame) -> list[list[int]]:
    """One tag sequence per sentence of each judgment, source then hypothesis."""
    return [list(map(int, row[f"{side}_tags"])) for _, row in rows.iterrows() for side in SIDES]


def _agreement(reference: pd.DataFrame, other: pd.DataFrame) -> dict:
    """Kappa, span F1 and word accuracy of `other` against `reference` (rows aligned by pair)."""
    return {"n_pairs": len(reference), **sequence_agreement(_sequences(reference), _sequences(other))}


def judge_agreement(taggings: pd.DataFrame) -> pd.DataFrame:
    """Every two judges on the pairs both tagged; the first judge (by name) is the reference for F1."""
    by_judge = {judge: part.set_index("pair_id") for judge, part in taggings.groupby("judge")}
    rows = []
    for first, second in combinations(sorted(by_judge, key=str), 2):
        shared = by_judge[first].index.intersection(by_judge[second].index)
        if len(shared):
            agreement = _agreement(by_judge[first].loc[shared], by_judge[second].loc[shared])
            rows.append({"judge_a": first, "judge_b": second, **agreement})
    columns = ["judge_a", "judge_b", "n_pairs", "n_words", "kappa", "span_f1", "word_accuracy"]
    return pd.DataFrame(rows, columns=columns)


def agreement_summary(pairwise: pd.DataFrame) -> pd.DataFrame:
    """Overall (mean over judge pairs, weighted by shared words) and per judge (over the pairs they belong to)."""
    rows = []
    if not pairwise.empty:
        rows.append({"judge": "all", **_weighted(pairwise)})
        for judge in sorted(set(pairwise["judge_a"]) | set(pairwise["judge_b"]), key=str):
            mine = pairwise[(pairwise["judge_a"] == judge) | (pairwise["judge_b"] == judge)]
            rows.append({"judge": judge, **_weighted(mine)})
    return pd.DataFrame(rows, columns=["judge", "n_judge_pairs", "n_words", "kappa", "span_f1", "word_accuracy"])


def _weighted(rows: pd.DataFrame) -> dict:
    weights = rows["n_words"].to_numpy(float)
    result = {"n_judge_pairs": len(rows), "n_words": int(weights.sum())}
    for column in ("kappa", "span_f1", "word_accuracy"):
        values = rows[column].to_numpy(float)
        keep = ~np.isnan(values)
        result[column] = float(np.average(values[keep], weights=weights[keep])) if keep.any() else np.nan
    return result


def majority_tags(taggings: pd.DataFrame) -> pd.DataFrame:
    """Per pair and side: the per-word majority tagging and the number of judges."""
    rows = []
    for pair_id, part in taggings.groupby("pair_id", sort=False):
        row = {"pair_id": pair_id, "n_taggings": len(part)}
        for side in SIDES:
            row[f"{side}_tags"] = majority_word_tags(part[f"{side}_tags"])
        rows.append(row)
    return pd.DataFrame(rows, columns=["pair_id", "n_taggings", "source_tags", "hypothesis_tags"])


def degree(taggings: pd.DataFrame) -> pd.DataFrame:
    """Per pair: share of tagged words per sentence and over both (the degree of non-paraphrase)."""
    majority = majority_tags(taggings)
    for side in SIDES:
        majority[f"{side}_share"] = majority[f"{side}_tags"].map(lambda tags: np.mean(tags) if len(tags) else 0.0)
    tagged = majority["source_tags"].map(sum) + majority["hypothesis_tags"].map(sum)
    words = majority["source_tags"].map(len) + majority["hypothesis_tags"].map(len)
    majority["tagged_share"] = (tagged / words.where(words > 0)).astype(float)
    majority["has_span"] = tagged > 0
    return majority


def degree_distribution(degrees: pd.DataFrame, pairs: pd.DataFrame, by: str) -> pd.DataFrame:
    """The degree's distribution per value of `by` (corpus or system) and over all pairs."""
    work = degrees.join(pairs.set_index("pair_id")[[by]], on="pair_id")
    parts = [*work.groupby(by, sort=True), ("all", work)]
    rows = [
        {
            by: name,
            "n_pairs": len(part),
            "mean_tagged_share": part["tagged_share"].mean(),
            "median_tagged_share": part["tagged_share"].median(),
            "share_with_span": part["has_span"].mean(),
        }
        for name, part in parts
    ]
    return pd.DataFrame(rows, columns=[by, "n_pairs", "mean_tagged_share", "median_tagged_share", "share_with_span"])


def degree_correlation(degrees, pairs, metrics, directions) -> pd.DataFrame:
    """Spearman and Kendall between the degree and every (oriented) metric, and the mean 5-way answer if present.

    A metric that tracks fine-grained meaning loss correlates negatively: more tagged words,
    less similar. Metrics are oriented so that higher means closer.
    """
    work = degrees.join(pairs.set_index("pair_id"), on="pair_id")
    columns = [(metric, orient(work[metric].astype(float), directions.get(metric, "higher"))) for metric in metrics]
    if "mean_ordinal" in work:
        columns.append(("5-way answer (mean ordinal)", work["mean_ordinal"].astype(float).to_numpy()))
    rows = []
    for name, values in columns:
        x, y = work["tagged_share"].to_numpy(float), np.asarray(values, float)
        keep = ~(np.isnan(x) | np.isnan(y))
        enough = keep.sum() >= 3 and np.ptp(x[keep]) > 0 and np.ptp(y[keep]) > 0
        rows.append(
            {
                "against": name,
                "n_pairs": int(keep.sum()),
                "spearman": stats.spearmanr(x[keep], y[keep])[0] if enough else np.nan,
                "kendall": stats.kendalltau(x[keep], y[keep])[0] if enough else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=["against", "n_pairs", "spearman", "kendall"])
