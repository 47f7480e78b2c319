"""ParaTag's span tagging: agreement between judges and the degree of paraphrase of each pair.

A tagging marks, in each sentence, the words that have no counterpart in the other one
(0/1 per word). Agreement follows ParaTag (section 4.2): word-level Cohen's kappa over the
concatenated tags of every two judges' shared pairs (scikit-learn), and span F1 with
seqeval (exact span match) taking the first judge as reference, with word accuracy beside
it. Test2's filter (section 4.2) drops pairs whose two taggings reach a span F1 below 0.4.
The degree of paraphrase of a pair is measured by `tagged_share`, its share of tagged (not
paraphrased) words under the per-word majority (a word is tagged when more than half of the
pair's judges tagged it): 0 is a full paraphrase. Section 5.3's subset keeps the pairs whose
`tagged_share` is at most θ = 0.05.
"""

from itertools import combinations

import numpy as np
import pandas as pd

from annotation.tagging import SIDES, majority_word_tags
from metrics.tag_agreement import SPAN as SPAN  # re-exported: the span tests read it here
from metrics.tag_agreement import bio as bio
from metrics.tag_agreement import sequence_agreement
from reports.analysis.common import orient, scipy_stats

TEST2_MIN_F1 = 0.4  # ParaTag section 4.2: annotation pairs below this span F1 were discarded from Test2
THETA = 0.05  # ParaTag section 5.3: the largest share of non-paraphrased words in the generator's training subset
MEAN_OF_PAIRS = "mean of pairwise kappas (weighted by shared words)"
POOLED = "pooled: one kappa over every two judges' words"


def _sequences(rows: pd.DataFrame) -> list[list[int]]:
    """One tag sequence per sentence of each judgment, source then hypothesis."""
    return [list(map(int, row[f"{side}_tags"])) for _, row in rows.iterrows() for side in SIDES]


def _agreement(reference: pd.DataFrame, other: pd.DataFrame) -> dict:
    """Kappa, span F1 and word accuracy of `other` against `reference` (rows aligned by pair)."""
    return {"n_pairs": len(reference), **sequence_agreement(_sequences(reference), _sequences(other))}


def _judge_pairs(taggings: pd.DataFrame):
    """(first judge, second judge, their rows on the pairs both tagged), judges by name, pairs aligned."""
    by_judge = {judge: part.set_index("pair_id") for judge, part in taggings.groupby("judge")}
    for first, second in combinations(sorted(by_judge, key=str), 2):
        shared = by_judge[first].index.intersection(by_judge[second].index)
        if len(shared):
            yield first, second, by_judge[first].loc[shared], by_judge[second].loc[shared]


def judge_agreement(taggings: pd.DataFrame) -> pd.DataFrame:
    """Every two judges on the pairs both tagged; the first judge (by name) is the reference for F1."""
    rows = [
        {"judge_a": first, "judge_b": second, **_agreement(mine, theirs)}
        for first, second, mine, theirs in _judge_pairs(taggings)
    ]
    columns = ["judge_a", "judge_b", "n_pairs", "n_words", "kappa", "span_f1", "word_accuracy"]
    return pd.DataFrame(rows, columns=columns)


def pooled_kappa(taggings: pd.DataFrame) -> tuple[float, int]:
    """One Cohen's kappa over the words of every two judges, concatenated (the first judge by name as rater A),
    and the number of word comparisons; beside the mean of pairwise kappas once three or more judges tag."""
    first_tags, second_tags = [], []
    for _, _, mine, theirs in _judge_pairs(taggings):
        first_tags += [tag for sequence in _sequences(mine) for tag in sequence]
        second_tags += [tag for sequence in _sequences(theirs) for tag in sequence]
    if len(set(first_tags) | set(second_tags)) < 2:
        return np.nan, len(first_tags)
    from sklearn.metrics import cohen_kappa_score  # scikit-learn loads scipy.stats: imported when used

    return float(cohen_kappa_score(first_tags, second_tags)), len(first_tags)


AGREEMENT_COLUMNS = ["judge", "n_judge_pairs", "n_words", "kappa", "span_f1", "word_accuracy", "kappa_is"]


def agreement_summary(pairwise: pd.DataFrame, taggings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Overall (mean over judge pairs, weighted by shared words) and per judge (over the pairs they belong to).

    Given the taggings and three or more judges, a row `all (pooled)` adds :func:`pooled_kappa`; `kappa_is` says
    which kappa each row holds.
    """
    rows = []
    if not pairwise.empty:
        rows.append({"judge": "all", **_weighted(pairwise), "kappa_is": MEAN_OF_PAIRS})
        judges = sorted(set(pairwise["judge_a"]) | set(pairwise["judge_b"]), key=str)
        if taggings is not None and len(judges) >= 3:
            kappa, n_words = pooled_kappa(taggings)
            pooled = {"n_judge_pairs": len(pairwise), "n_words": n_words, "kappa": kappa, "kappa_is": POOLED}
            rows.append({"judge": "all (pooled)", **pooled})
        for judge in judges:
            mine = pairwise[(pairwise["judge_a"] == judge) | (pairwise["judge_b"] == judge)]
            rows.append({"judge": judge, **_weighted(mine), "kappa_is": MEAN_OF_PAIRS})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def pair_span_f1(mine: pd.Series, theirs: pd.Series) -> float:
    """Span F1 (seqeval, exact match) of two taggings of one pair over both sentences; two empty taggings agree: 1."""
    truth = [bio(list(map(int, mine[f"{side}_tags"]))) for side in SIDES]
    guess = [bio(list(map(int, theirs[f"{side}_tags"]))) for side in SIDES]
    if not any(label != "O" for sequence in truth + guess for label in sequence):
        return 1.0
    from seqeval.metrics import f1_score  # seqeval imports scikit-learn and scipy.stats: a second, paid when used

    return float(f1_score(truth, guess, zero_division=0))


def filter_test2(taggings: pd.DataFrame, min_f1: float = TEST2_MIN_F1) -> tuple[pd.DataFrame, dict]:
    """Test2's filter (section 4.2): drop the pairs where two judges' taggings reach a span F1 below `min_f1`.

    With more than two judges a pair is dropped when any two of them fall below; pairs one judge tagged cannot
    be tested and stay. Returns the kept taggings and the counts.
    """
    dropped, tested = set(), set()
    for _, _, mine, theirs in _judge_pairs(taggings):
        for pair_id in mine.index:
            tested.add(pair_id)
            if pair_span_f1(mine.loc[pair_id], theirs.loc[pair_id]) < min_f1:
                dropped.add(pair_id)
    counts = {
        "min_span_f1": min_f1,
        "n_pairs": int(taggings["pair_id"].nunique()),
        "n_tested": len(tested),
        "n_discarded": len(dropped),
        "n_kept": len(tested - dropped),
    }
    return taggings[~taggings["pair_id"].isin(dropped)], counts


def agreement_after_test2(taggings: pd.DataFrame, min_f1: float = TEST2_MIN_F1) -> pd.DataFrame:
    """The counts of :func:`filter_test2` and the overall agreement on the pairs it keeps (one row; none when no
    pair has two taggings to compare)."""
    kept, counts = filter_test2(taggings, min_f1)
    columns = [*counts, "n_words", "kappa", "span_f1", "word_accuracy"]
    if not counts["n_tested"]:
        return pd.DataFrame(columns=columns)
    summary = agreement_summary(judge_agreement(kept))
    overall = summary.iloc[0].drop(["judge", "kappa_is"]).to_dict() if len(summary) else {}
    return pd.DataFrame([{**counts, **overall}], columns=columns)


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


def degree(taggings: pd.DataFrame, theta: float = THETA) -> pd.DataFrame:
    """Per pair: share of tagged words per sentence and over both (`tagged_share`, by which the degree of paraphrase
    is measured), and whether the pair is in section 5.3's subset (`tagged_share` <= `theta`)."""
    majority = majority_tags(taggings)
    for side in SIDES:
        majority[f"{side}_share"] = majority[f"{side}_tags"].map(lambda tags: np.mean(tags) if len(tags) else 0.0)
    tagged = majority["source_tags"].map(sum) + majority["hypothesis_tags"].map(sum)
    words = majority["source_tags"].map(len) + majority["hypothesis_tags"].map(len)
    majority["tagged_share"] = (tagged / words.where(words > 0)).astype(float)
    majority["has_span"] = tagged > 0
    majority["within_theta"] = majority["tagged_share"] <= theta
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
            "n_within_theta": int(part["within_theta"].sum()),
        }
        for name, part in parts
    ]
    columns = [by, "n_pairs", "mean_tagged_share", "median_tagged_share", "share_with_span", "n_within_theta"]
    return pd.DataFrame(rows, columns=columns)


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
                "spearman": scipy_stats().spearmanr(x[keep], y[keep])[0] if enough else np.nan,
                "kendall": scipy_stats().kendalltau(x[keep], y[keep])[0] if enough else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=["against", "n_pairs", "spearman", "kendall"])


def span_analysis(taggings, pairs, directions, *, min_f1=TEST2_MIN_F1, theta=THETA) -> dict[str, pd.DataFrame]:
    """The span report's tables computed from data (every one but the detectors', which read stored models):
    `taggings` as `judge_agreement` takes them, `pairs` with `pair_id`, `corpus`, `system`, each metric of
    `directions` and, where judges gave one, `mean_ordinal`."""
    pairwise = judge_agreement(taggings)
    degrees = degree(taggings, theta)
    per_pair = degrees.join(pairs.set_index("pair_id")[["corpus", "system"]], on="pair_id")
    per_pair_columns = [
        "pair_id", "corpus", "system", "n_taggings", "source_share", "hypothesis_share", "tagged_share", "has_span",
        "within_theta",
    ]  # fmt: skip
    return {
        "span_agreement": agreement_summary(pairwise, taggings),
        "span_agreement_pairs": pairwise,
        "span_agreement_test2": agreement_after_test2(taggings, min_f1),
        "span_degree_by_corpus": degree_distribution(degrees, pairs, "corpus"),
        "span_degree_by_system": degree_distribution(degrees, pairs, "system"),
        "span_correlation": degree_correlation(degrees, pairs, list(directions), directions),
        "span_degree": per_pair[per_pair_columns],
    }
