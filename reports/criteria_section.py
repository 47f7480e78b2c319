"""The report section of `criteria` campaigns: PEM's tables (reports.analysis.criteria) from the database."""

import numpy as np
import pandas as pd
from django.core.cache import cache
from scipy import stats

from annotation.criteria_scale import CRITERIA
from annotation.tasktypes.criteria import ratings_frame
from reports.analysis import criteria
from reports.cache import CACHE_SECONDS, fingerprint
from reports.frames import load_frames

NO_SYSTEM = "(no system)"
TITLES = {
    "criteria_by_system": "Each criterion by system: mean rating with its 95% interval (PEM)",
    "criteria_inter_judge": "Inter-judge Pearson correlation, averaged over judge pairs (PEM Table 1)",
    "criteria_vs_overall": "Each criterion against Overall (PEM Table 2)",
    "criteria_metrics": "Metrics against Overall and Adequacy, sentence and system level",
    "criteria_alpha": "Krippendorff's alpha (interval) per criterion",
    "criteria_pem_fit": "PEM's fit: SVR from the metric scores to Overall, k-fold cross-validated",
}


def criteria_tables(campaigns) -> dict[str, pd.DataFrame]:
    """PEM's tables for the real pairs and counted ratings of `campaigns`, computed once per state of the data."""
    key = f"parasol-criteria:{fingerprint(campaigns)}"
    tables = cache.get(key)
    if tables is None:
        tables = _criteria_tables(campaigns)
        cache.set(key, tables, CACHE_SECONDS)
    return tables


def _criteria_tables(campaigns):
    frames = load_frames(campaigns, fields=("values",))
    pairs = frames.pairs.assign(system=frames.pairs["system"].replace("", NO_SYSTEM))
    judgments = frames.judgments.join(ratings_frame(frames.judgments).drop(columns="pair_id"))
    metrics = [m for m in frames.directions if m in pairs and pairs[m].notna().any()]
    for metric in metrics:
        pairs[metric] = pd.to_numeric(pairs[metric], errors="coerce").astype(float)
    fit = criteria.pem_fit(judgments, pairs, metrics)
    return {
        "criteria_by_system": with_intervals(criteria.criteria_by_system(judgments, pairs)),
        "criteria_inter_judge": _inter_judge(judgments, pairs),
        "criteria_vs_overall": criteria.criteria_vs_overall(judgments, pairs),
        "criteria_metrics": criteria.metrics_vs_criteria(judgments, pairs, metrics, frames.directions),
        "criteria_alpha": criteria.alpha_per_criterion(judgments),
        "criteria_pem_fit": pd.DataFrame([{"metrics": ", ".join(metrics), **fit}]),
    }


def with_intervals(table: pd.DataFrame, level=0.95) -> pd.DataFrame:
    """`table` (mean, std, n per row) with the t-interval of each mean: `ci_low`, `ci_high` (NaN below 2 ratings)."""
    n = table["n"].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stats.t.ppf(0.5 + level / 2, n - 1) * table["std"].astype(float) / np.sqrt(n)
    half = half.where(n >= 2)
    return table.assign(ci_low=table["mean"] - half, ci_high=table["mean"] + half)


def _inter_judge(judgments, pairs) -> pd.DataFrame:
    """Per criterion, PEM's average of the pairwise Pearson correlations between judges."""
    rows = []
    for name in CRITERIA:
        table = criteria.inter_judge_correlation(judgments, pairs, criterion=name)
        rows.append(
            {
                "criterion": name,
                "n_judge_pairs": len(table),
                "sentence_level": table["sentence_level"].mean() if len(table) else np.nan,
                "system_level": table["system_level"].mean() if len(table) else np.nan,
            }
        )
    return pd.DataFrame(rows)
