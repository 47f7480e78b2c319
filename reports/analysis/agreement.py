"""Agreement between judges on the pairs that two or more of them judged.

- Krippendorff's alpha (ordinal) on the task type's rating (the 5-way scale's 4-point ordinal), an
  answer without one (Don't know) as missing.
- Fleiss' kappa on the binary votes, in its form for a varying number of judges per pair
  (equal to Fleiss (1971) when every pair has the same number).
- Cohen's kappa (binary) for every two judges sharing at least `min_shared` pairs.

The ratings and votes are the judgments' vote columns (`annotation.votes.VOTE_COLUMNS`), as the task
type declares them.
"""

import krippendorff
import numpy as np
import pandas as pd

from reports.analysis.common import subsets

# The statistics of the agreement table, in its order, as a reader names them.
STATISTIC_TITLES = {
    "krippendorff_alpha_ordinal": "Krippendorff's α (ordinal)",
    "fleiss_kappa_binary": "Fleiss' κ (binary)",
    "cohen_kappa_binary_mean": "Cohen's κ (binary), mean over judge pairs",
    "cohen_kappa_binary_median": "Cohen's κ (binary), median over judge pairs",
}


def fleiss_kappa(counts) -> float:
    """Fleiss' kappa from an items x categories matrix of counts; items with fewer than 2 ratings are dropped."""
    counts = np.asarray(counts, dtype=float)
    raters = counts.sum(axis=1)
    counts, raters = counts[raters >= 2], raters[raters >= 2]
    if len(counts) == 0:
        return np.nan
    agreement = ((counts * (counts - 1)).sum(axis=1) / (raters * (raters - 1))).mean()
    shares = counts.sum(axis=0) / raters.sum()
    chance = (shares**2).sum()
    return float((agreement - chance) / (1 - chance)) if chance < 1 else np.nan


def _value_counts(judgments: pd.DataFrame, column: str, values: list) -> np.ndarray:
    """Pairs x values matrix of how many judges gave each value of `column` (missing values left out)."""
    if not len(values):
        return np.zeros((0, 0), dtype=np.int64)
    mapped = judgments[column]
    kept = mapped.notna().to_numpy()
    codes, _ = pd.factorize(judgments["pair_id"].to_numpy()[kept])
    column = pd.Index(values, dtype=float).get_indexer(mapped[kept].astype(float))
    counts = np.bincount(codes * len(values) + column, minlength=(codes.max() + 1 if len(codes) else 0) * len(values))
    return counts.reshape(-1, len(values))


def cohen_pairs(judgments: pd.DataFrame, *, min_shared=5) -> pd.DataFrame:
    """Binary Cohen's kappa of every two judges with at least `min_shared` pairs both answered (Don't know left out)."""
    columns = ["judge_a", "judge_b", "n_shared", "observed_agreement", "kappa"]
    votes = judgments.loc[judgments["vote"].notna(), ["pair_id", "judge", "vote"]].astype({"vote": float, "judge": str})
    joined = votes.merge(votes, on="pair_id", suffixes=("_a", "_b"))
    joined = joined[joined["judge_a"] < joined["judge_b"]]
    if joined.empty:
        return pd.DataFrame(columns=columns)
    joined = joined.assign(agree=joined["vote_a"] == joined["vote_b"])
    grouped = joined.groupby(["judge_a", "judge_b"], sort=True).agg(
        n_shared=("agree", "size"), agree=("agree", "sum"), a=("vote_a", "sum"), b=("vote_b", "sum")
    )
    grouped = grouped[grouped["n_shared"] >= min_shared]
    n = grouped["n_shared"].astype(float)
    observed = grouped["agree"] / n
    share_a, share_b = grouped["a"] / n, grouped["b"] / n
    chance = share_a * share_b + (1 - share_a) * (1 - share_b)
    kappa = ((observed - chance) / (1 - chance)).where(chance < 1)
    return pd.DataFrame(
        {"n_shared": grouped["n_shared"], "observed_agreement": observed, "kappa": kappa}
    ).reset_index()[columns]


def agreement_table(judgments: pd.DataFrame, corpus_of_pair: pd.Series, *, min_shared=5):
    """(agreement, cohen, notes): alpha, Fleiss' kappa and mean/median pairwise kappa per corpus (+ Global)."""
    rows, notes = [], []
    work = judgments.assign(pair_id=judgments["pair_id"].astype(str), judge=judgments["judge"].astype(str))
    work = work.assign(corpus=work["pair_id"].map(corpus_of_pair))
    if work["judge"].nunique() < 2:
        notes.append("Fewer than two judges: inter-annotator agreement is undefined.")
    cohen_all = []
    ratings = sorted(work["rating"].dropna().unique())  # the rating's values, in order (the scale's 1-4)
    for corpus, part in subsets(work):
        ordinal = _value_counts(part, "rating", ratings)
        ordinal = ordinal[ordinal.sum(axis=1) >= 2]
        binary = _value_counts(part, "vote", [0, 1])
        binary = binary[binary.sum(axis=1) >= 2]
        common = {"corpus": corpus, "n_judges": part["judge"].nunique(), "n_judgments": len(part)}
        alpha = np.nan
        if len(ordinal) and (ordinal.sum(axis=0) > 0).sum() >= 2:
            alpha = krippendorff.alpha(value_counts=ordinal, level_of_measurement="ordinal")
        rows.append({"statistic": "krippendorff_alpha_ordinal", "value": alpha, "n_pairs": len(ordinal), **common})
        rows.append(
            {"statistic": "fleiss_kappa_binary", "value": fleiss_kappa(binary), "n_pairs": len(binary), **common}
        )
        cohen = cohen_pairs(part, min_shared=min_shared)
        kappas = cohen["kappa"].dropna()
        for name, value in (("cohen_kappa_binary_mean", kappas.mean()), ("cohen_kappa_binary_median", kappas.median())):
            rows.append(
                {"statistic": name, "value": value if len(kappas) else np.nan, "n_pairs": len(kappas), **common}
            )
        cohen_all.append(cohen.assign(corpus=corpus))
        if len(ordinal) == 0 and work["judge"].nunique() >= 2:
            notes.append(f"Agreement in {corpus}: no pair has two or more ratings yet.")
    frame = pd.DataFrame(rows, columns=["statistic", "corpus", "value", "n_pairs", "n_judges", "n_judgments"])
    cohen = pd.concat(cohen_all, ignore_index=True) if cohen_all else pd.DataFrame()
    cohen = cohen.reindex(columns=["corpus", "judge_a", "judge_b", "n_shared", "observed_agreement", "kappa"])
    return frame, cohen, notes
