"""Tables 1, 2 and 4 of the paper: score distributions, corpus sizes, correlation with edit distance."""

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist
from scipy import special

from metrics.registry import title_of
from reports.analysis.common import corpora, subsets
from reports.analysis.labels import CLASS_NAMES, GLOBAL
from reports.analysis.vocabulary import title_for


def edit_distances(sources, hypotheses) -> np.ndarray:
    """Normalised character Levenshtein distance of each source and hypothesis (rapidfuzz)."""
    if len(sources) == 0:
        return np.empty(0)
    return np.asarray(
        cpdist(list(sources), list(hypotheses), scorer=Levenshtein.normalized_distance, workers=1), dtype=float
    )


def table1(frame: pd.DataFrame, metrics, directions) -> pd.DataFrame:
    """Mean and standard deviation (ddof=1) of each metric per corpus (+ Global) and label."""
    rows = []
    labelled = frame[frame["paraphrase"].notna()]
    parts = list(subsets(labelled))
    for metric in metrics:
        for corpus, rows_of_corpus in parts:
            for value, name in CLASS_NAMES.items():
                values = (
                    rows_of_corpus.loc[rows_of_corpus["paraphrase"] == value, metric].dropna().to_numpy(dtype=float)
                )
                rows.append(
                    {
                        "metric": metric,
                        "direction": directions[metric],
                        "corpus": corpus,
                        "label": name,
                        "n": len(values),
                        "mean": values.mean() if len(values) else np.nan,
                        "std": values.std(ddof=1) if len(values) > 1 else np.nan,
                    }
                )
    return pd.DataFrame(rows, columns=["metric", "direction", "corpus", "label", "n", "mean", "std"])


def table2(frame: pd.DataFrame) -> pd.DataFrame:
    """Size and paraphrase / non-paraphrase counts and shares (of the labelled pairs) per corpus and Global."""
    rows = []
    for corpus, rows_of_corpus in subsets(frame):
        n_paraphrase = int((rows_of_corpus["paraphrase"] == 1).sum())
        n_non_paraphrase = int((rows_of_corpus["paraphrase"] == 0).sum())
        labelled = n_paraphrase + n_non_paraphrase
        rows.append(
            {
                "corpus": corpus,
                "size": len(rows_of_corpus),
                "n_labelled": labelled,
                "n_paraphrase": n_paraphrase,
                "share_paraphrase": n_paraphrase / labelled if labelled else np.nan,
                "n_non_paraphrase": n_non_paraphrase,
                "share_non_paraphrase": n_non_paraphrase / labelled if labelled else np.nan,
                "n_unlabelled": len(rows_of_corpus) - labelled,
                "n_ties": int(rows_of_corpus["is_tie"].sum()) if "is_tie" in rows_of_corpus else 0,
            }
        )
    return pd.DataFrame(rows)


def pearson(x, y) -> tuple[float, float]:
    """Pearson's r and its two-sided p-value; NaN when n < 3 or either side is constant."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = len(x)
    if n < 3:
        return np.nan, np.nan
    dx, dy = x - x.mean(), y - y.mean()
    denominator = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    if denominator == 0 or not np.isfinite(denominator):
        return np.nan, np.nan
    r = float(np.clip((dx * dy).sum() / denominator, -1.0, 1.0))
    if abs(r) == 1.0:
        return r, 0.0
    t = r * np.sqrt((n - 2) / (1 - r * r))
    return r, float(2 * special.stdtr(n - 2, -abs(t)))  # scipy.stats.t.sf, without importing scipy.stats


def table4(frame: pd.DataFrame, metrics) -> tuple[pd.DataFrame, list[str]]:
    """Pearson correlation of each metric with the edit distance inside each class, per corpus (+ Global)."""
    rows, notes = [], []
    labelled = frame.loc[frame["paraphrase"].notna(), ["corpus", "paraphrase", "edit_distance", *metrics]]
    # The rows of each corpus and class, selected once for every metric.
    classes = [
        (corpus, name, rows_of_corpus[rows_of_corpus["paraphrase"] == value])
        for corpus, rows_of_corpus in subsets(labelled)
        for value, name in CLASS_NAMES.items()
    ]
    for metric in metrics:
        constant_in = []
        for corpus, name, part in classes:
            scored = part[metric].notna().to_numpy()
            scores = part[metric].to_numpy(dtype=float)[scored]
            r, p = pearson(scores, part["edit_distance"].to_numpy(dtype=float)[scored])
            if len(scores) >= 3 and np.ptp(scores) == 0:
                constant_in.append(f"{corpus}/{title_for(name).lower()}")
            rows.append(
                {"metric": metric, "corpus": corpus, "label": name, "n": len(scores), "pearson_r": r, "p_value": p}
            )
        if constant_in:
            notes.append(
                f"{title_of(metric)} gives one constant score in {', '.join(constant_in)}: correlation undefined."
            )
    return pd.DataFrame(rows, columns=["metric", "corpus", "label", "n", "pearson_r", "p_value"]), notes


def corpus_notes(frame: pd.DataFrame) -> list[str]:
    notes = []
    labelled = frame[frame["paraphrase"].notna()]
    for corpus in corpora(labelled):
        present = set(labelled.loc[labelled["corpus"] == corpus, "paraphrase"].astype(int))
        if len(present) == 1:
            only = CLASS_NAMES[present.pop()]
            notes.append(
                f"Corpus {corpus} has only {only} pairs labelled: AUC, EER and the other class's rows "
                "are undefined there."
            )
    if len(corpora(frame)) == 1:
        notes.append(f"One corpus only: the {GLOBAL} column repeats it.")
    return notes
