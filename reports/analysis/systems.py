"""Systems: what produced each hypothesis, compared by the judges and by every metric (PEM's system level).

A system's human paraphrase rate is the share of its labelled pairs whose label is
paraphrase. Confidence intervals resample *sources* (the sentences every system
paraphrased), not pairs: a system's pairs on one source are not independent draws, and
resampling sources keeps the systems paired. Draws are kept as counts per source
(weights), so every statistic of a draw is a weighted sum.
"""

from itertools import combinations

import numpy as np
import pandas as pd

from reports.analysis.common import orient, scipy_stats

SYSTEM_KEYS_DEFAULT = ("generator", "template")
MIN_SYSTEMS_FOR_CORRELATION = 4
# Each column's scipy.stats function, by name: scipy.stats is imported when systems are compared, not before
# (it costs half a second that a report without systems would spend for nothing).
CORRELATIONS = {"pearson": "pearsonr", "spearman": "spearmanr", "kendall": "kendalltau"}


def system_names(pairs: pd.DataFrame, keys=None) -> pd.Series:
    """Each pair's system: the `keys` columns joined by " / "; by default `system`, else generator / template.

    A pair with none of the keys filled has no system (empty string).
    """
    if keys is None:
        has_system = "system" in pairs and pairs["system"].fillna("").astype(str).ne("").any()
        keys = ["system"] if has_system else [key for key in SYSTEM_KEYS_DEFAULT if key in pairs]
    keys = [key for key in keys if key in pairs]
    if not keys:
        return pd.Series("", index=pairs.index, dtype=object)
    parts = pairs[keys].fillna("").astype(str)
    # " / ".join of the filled values, column by column (a row-wise apply takes seconds on 400,000 pairs).
    joined = parts.iloc[:, 0].to_numpy(dtype=object)
    for position in range(1, len(keys)):
        value = parts.iloc[:, position].to_numpy(dtype=object)
        separator = np.where((joined != "") & (value != ""), " / ", "")
        joined = joined + separator + value
    return pd.Series(joined, index=pairs.index, dtype=object)


def source_weights(n_sources: int, n_bootstrap: int, seed: int, chunk: int = 200):
    """Bootstrap draws over sources as counts (draws x sources), in chunks; the same seed gives the same draws."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_bootstrap, chunk):
        size = min(chunk, n_bootstrap - start)
        picks = rng.integers(0, n_sources, size=(size, n_sources))
        # One bincount over all rows, each row's picks shifted into its own block of `n_sources` counts.
        shifted = picks + (np.arange(size) * n_sources)[:, None]
        yield np.bincount(shifted.ravel(), minlength=size * n_sources).reshape(size, n_sources)


def _per_source(frame: pd.DataFrame, value: str, sources: pd.Index) -> pd.DataFrame:
    """Per system x source: the sum and the count of `value` (NaN values left out)."""
    known = frame[frame[value].notna()]
    grouped = known.groupby(["system", "source"])[value].agg(["sum", "count"])
    systems = sorted(frame["system"].unique())
    full = pd.MultiIndex.from_product([systems, sources], names=["system", "source"])
    return grouped.reindex(full, fill_value=0)


def _arrays(per_source: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each system's sums and counts per source as arrays, read out of the frame once for every draw."""
    return {
        system: (part["sum"].to_numpy(float), part["count"].to_numpy(float))
        for system, part in per_source.groupby(level="system")
    }


def _rates(arrays: dict, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each system's weighted mean for every draw (NaN where a draw holds none of its values)."""
    rates = {}
    for system, (sums, counts) in arrays.items():
        with np.errstate(invalid="ignore", divide="ignore"):
            rates[system] = (weights @ sums) / (weights @ counts)
    return rates


def bootstrap_system_means(frame, value, n_bootstrap=1000, seed=0) -> dict[str, np.ndarray]:
    """For each system, `n_bootstrap` means of `value` over resampled sources."""
    sources = pd.Index(sorted(frame["source"].unique()))
    arrays = _arrays(_per_source(frame, value, sources))
    draws = [_rates(arrays, weights) for weights in source_weights(len(sources), n_bootstrap, seed)]
    return {system: np.concatenate([draw[system] for draw in draws]) for system in draws[0]} if draws else {}


def _interval(values: np.ndarray, level=0.95) -> tuple[float, float]:
    values = values[~np.isnan(values)]
    if not len(values):
        return np.nan, np.nan
    tail = (1 - level) / 2 * 100
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def systems_table(frame, judgments, metrics, n_bootstrap=1000, seed=0) -> pd.DataFrame:
    """Per system: pairs, labelled pairs, paraphrase rate [95% CI over sources], mean answer, Don't know share, metrics.

    `frame`: one row per pair with `pair_id`, `source`, `system` and `paraphrase` (0/1, empty when
    unlabelled), plus one column per metric; `judgments`: `pair_id` and the vote columns (`rating`, `abstained`).
    """
    frame = frame[frame["system"].fillna("") != ""].copy()
    frame["paraphrase"] = frame["paraphrase"].astype(float)
    answers = _answers_by_pair(judgments)
    frame = frame.join(answers, on="pair_id")
    draws = bootstrap_system_means(frame, "paraphrase", n_bootstrap, seed)
    rows = []
    for system, part in frame.groupby("system", sort=True):
        low, high = _interval(draws.get(system, np.array([])))
        n_answers = part["n_answers"].sum()
        rows.append(
            {
                "system": system,
                "n_pairs": len(part),
                "n_labelled": int(part["paraphrase"].notna().sum()),
                "paraphrase_rate": part["paraphrase"].mean(),
                "ci_low": low,
                "ci_high": high,
                "mean_ordinal": part["ordinal_sum"].sum() / part["n_ordinal"].sum()
                if part["n_ordinal"].sum()
                else np.nan,
                "share_dont_know": part["n_dont_know"].sum() / n_answers if n_answers else np.nan,
                **{metric: part[metric].mean() for metric in metrics},
            }
        )
    columns = ["system", "n_pairs", "n_labelled", "paraphrase_rate", "ci_low", "ci_high"]
    columns += ["mean_ordinal", "share_dont_know", *metrics]
    return pd.DataFrame(rows, columns=columns).sort_values("paraphrase_rate", ascending=False, ignore_index=True)


def _answers_by_pair(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per pair: answers given, Don't know answers, and the sum and count of the ratings (the 4-point ordinal)."""
    columns = ["n_answers", "n_dont_know", "ordinal_sum", "n_ordinal"]
    if judgments.empty:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="pair_id"), dtype=float)
    ordinal = judgments["rating"].astype(float)
    work = pd.DataFrame(
        {
            "pair_id": judgments["pair_id"].astype(str),
            "n_answers": 1,
            "n_dont_know": judgments["abstained"].astype(int),
            "ordinal_sum": ordinal.fillna(0),
            "n_ordinal": ordinal.notna().astype(int),
        }
    )
    return work.groupby("pair_id")[columns].sum()


def compared_systems(labelled: pd.DataFrame, max_comparisons=None) -> list[str]:
    """The systems the pairwise table compares: all, or the most-labelled k with k(k−1)/2 ≤ `max_comparisons`.

    Ties in the number of labelled pairs go to the system first by name, so the choice is repeatable.
    """
    counts = labelled.groupby("system").size()
    if max_comparisons is None or len(counts) * (len(counts) - 1) // 2 <= max_comparisons:
        return sorted(counts.index)
    k = int((1 + np.sqrt(1 + 8 * max_comparisons)) // 2)
    while k * (k - 1) // 2 > max_comparisons:
        k -= 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return sorted(system for system, _n in ranked[:k])


def pairwise_systems(frame, n_bootstrap=1000, seed=0, max_comparisons=None) -> pd.DataFrame:
    """Every two systems on the sources both have labelled pairs for: rate difference, sign test, paired bootstrap.

    Per shared source, d = rate of A − rate of B. The sign test counts sources with d > 0
    against d < 0 (ties dropped; scipy's exact binomial test). The paired bootstrap
    resamples shared sources; its two-sided p-value is twice the smaller share of draws on
    either side of 0 (capped at 1). `max_comparisons` bounds the work (`compared_systems`).
    """
    labelled = frame[frame["paraphrase"].notna() & (frame["system"].fillna("") != "")]
    labelled = labelled[labelled["system"].isin(compared_systems(labelled, max_comparisons))]
    rate = labelled.assign(paraphrase=labelled["paraphrase"].astype(float)).pivot_table(
        index="source", columns="system", values="paraphrase", aggfunc="mean"
    )
    rows = []
    for first, second in combinations(sorted(rate.columns), 2):
        shared = rate[[first, second]].dropna()
        difference = (shared[first] - shared[second]).to_numpy()
        rows.append({"system_a": first, "system_b": second, **_paired_tests(difference, n_bootstrap, seed)})
    columns = ["system_a", "system_b", "n_sources", "mean_difference", "n_a_better", "n_b_better"]
    return pd.DataFrame(rows, columns=[*columns, "p_sign", "p_bootstrap"])


def _paired_tests(difference: np.ndarray, n_bootstrap: int, seed: int) -> dict:
    n = len(difference)
    wins, losses = int((difference > 0).sum()), int((difference < 0).sum())
    p_sign = scipy_stats().binomtest(wins, wins + losses, 0.5).pvalue if wins + losses else np.nan
    p_bootstrap = np.nan
    if n:
        means = np.concatenate([weights @ difference / n for weights in source_weights(n, n_bootstrap, seed)])
        p_bootstrap = min(1.0, 2 * min((means <= 0).mean(), (means >= 0).mean()))
    return {
        "n_sources": n,
        "mean_difference": float(difference.mean()) if n else np.nan,
        "n_a_better": wins,
        "n_b_better": losses,
        "p_sign": p_sign,
        "p_bootstrap": p_bootstrap,
    }


def system_correlation(frame, metrics, directions, n_bootstrap=1000, seed=0, human="paraphrase") -> pd.DataFrame:
    """Per metric: Pearson, Spearman and Kendall between system means of the (oriented) metric and of `human`.

    `human` is the paraphrase label (0/1: the paraphrase rate) by default; a criteria campaign
    passes its mean Overall or Adequacy. Both sides average the *same* pairs, those with a
    human value and a score, so pairs no judge saw never move a system's metric mean. Metrics
    are oriented so that higher means closer (a distance is negated), so a metric that ranks
    systems as the judges do correlates positively. CIs resample sources and recompute every
    system mean; `meaningful` is False below four systems.
    """
    frame = frame[frame["system"].fillna("") != ""].copy()
    frame[human] = frame[human].astype(float)
    for metric in metrics:
        frame[metric] = orient(frame[metric].astype(float), directions.get(metric, "higher"))
    rows = []
    for metric in metrics:
        both_known = frame[frame[human].notna() & frame[metric].notna()]
        means = both_known.groupby("system")[[human, metric]].mean()
        human_draws = bootstrap_system_means(both_known, human, n_bootstrap, seed)
        metric_draws = bootstrap_system_means(both_known, metric, n_bootstrap, seed)
        row = {"metric": metric, "n_systems": len(means), "meaningful": len(means) >= MIN_SYSTEMS_FOR_CORRELATION}
        for name, function in CORRELATIONS.items():
            row[name] = _correlation(function, means[human], means[metric])
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = _draw_interval(function, human_draws, metric_draws)
        rows.append(row)
    columns = ["metric", "n_systems", "meaningful"]
    columns += [f"{name}{suffix}" for name in CORRELATIONS for suffix in ("", "_ci_low", "_ci_high")]
    return pd.DataFrame(rows, columns=columns)


def _correlation(function, x, y) -> float:
    """`function` (a name in scipy.stats) of x and y; NaN below three points or with a constant side."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan
    return float(getattr(scipy_stats(), function)(x, y)[0])


def _draw_interval(function, human_draws, metric_draws):
    systems = sorted(set(human_draws) & set(metric_draws))
    if len(systems) < 3:
        return np.nan, np.nan
    human = np.column_stack([human_draws[system] for system in systems])
    machine = np.column_stack([metric_draws[system] for system in systems])
    return _interval(draw_correlations(function, human, machine))


def draw_correlations(function, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`_correlation` of every row of `x` and `y` (draws x systems), a row's systems missing on either side left out.

    The rows are computed together, one batch per pattern of missing systems (nearly always one), with the
    arithmetic of scipy's own function, so each value is the one `_correlation` gives for its row, bit for bit
    (`tests/reports/test_analysis_systems.py` checks it): a thousand draws cost one call instead of a thousand.
    """
    values = np.full(len(x), np.nan)
    keep = ~(np.isnan(x) | np.isnan(y))
    patterns, which = np.unique(keep, axis=0, return_inverse=True)
    for k, pattern in enumerate(patterns):
        if pattern.sum() < 3:
            continue
        rows = np.flatnonzero(which.reshape(-1) == k)
        xs, ys = x[rows][:, pattern], y[rows][:, pattern]
        varied = (np.ptp(xs, axis=1) != 0) & (np.ptp(ys, axis=1) != 0)  # a constant side has no correlation
        if varied.any():
            values[rows[varied]] = BATCHED_CORRELATIONS[function](xs[varied], ys[varied])
    return values


def _pearson_rows(x, y):
    return scipy_stats().pearsonr(x, y, axis=-1).statistic


def _spearman_rows(x, y):
    """scipy's `spearmanr` row by row: the ranks' correlation as `np.corrcoef` computes it (which spearmanr calls)."""
    ranked = np.stack([scipy_stats().rankdata(x, axis=-1), scipy_stats().rankdata(y, axis=-1)], axis=1)
    ranked = ranked - ranked.mean(axis=2)[..., None]
    covariance = ranked @ ranked.transpose(0, 2, 1)
    covariance *= np.true_divide(1, ranked.shape[2] - 1)
    spread = np.sqrt(np.stack([covariance[:, 0, 0], covariance[:, 1, 1]], axis=1))
    return np.clip(covariance[:, 1, 0] / spread[:, 1] / spread[:, 0], -1, 1)


def _kendall_rows(x, y):
    """scipy's `kendalltau` (tau-b) row by row, from the signs of every two systems' differences."""
    n = x.shape[1]
    first, second = np.triu_indices(n, 1)
    dx, dy = np.sign(x[:, second] - x[:, first]), np.sign(y[:, second] - y[:, first])
    concordant_minus_discordant = (dx * dy).sum(axis=1)
    total = n * (n - 1) // 2
    x_ties, y_ties = (dx == 0).sum(axis=1), (dy == 0).sum(axis=1)
    tau = concordant_minus_discordant / np.sqrt(total - x_ties) / np.sqrt(total - y_ties)
    return np.minimum(1.0, np.maximum(-1.0, tau))


# Each of CORRELATIONS' functions over many rows at once (`draw_correlations`).
BATCHED_CORRELATIONS = {"pearsonr": _pearson_rows, "spearmanr": _spearman_rows, "kendalltau": _kendall_rows}


def system_report(frame, judgments, metrics, n_bootstrap=1000, seed=0):
    """The systems table (`systems_table`; empty when no pair has a system): the part of the system tables that
    reads the judgments, a step of its own so that new judgments leave `system_comparisons` alone."""
    return systems_table(_with_systems(frame, metrics), judgments, metrics, n_bootstrap, seed)


def system_comparisons(frame, metrics, directions, n_bootstrap=1000, seed=0, max_comparisons=None):
    """The pairwise and correlation tables of the systems and notes; empty tables when no pair has a system.

    `frame` as for `systems_table`, with `source`; works with human or gold labels alike;
    `max_comparisons`: at most this many rows in the pairwise table (a note says so when it bites).
    """
    frame = _with_systems(frame, metrics)
    pairwise = pairwise_systems(frame, n_bootstrap, seed, max_comparisons)
    correlation = system_correlation(frame, metrics, directions, n_bootstrap, seed)
    notes = _comparison_notes(frame, max_comparisons)
    n_systems = frame.loc[frame["system"].fillna("") != "", "system"].nunique()
    if 0 < n_systems < MIN_SYSTEMS_FOR_CORRELATION:  # none at all: the tables are empty, nothing to say
        notes.append(
            f"Only {n_systems} system(s): system-level correlations need at least "
            f"{MIN_SYSTEMS_FOR_CORRELATION} systems to mean anything."
        )
    return {"system_pairwise": pairwise, "system_correlation": correlation}, notes


def _has_system(frame) -> bool:
    return "system" in frame and frame["system"].fillna("").astype(str).ne("").any()


def _with_systems(frame, metrics):
    if not _has_system(frame):
        frame = frame.iloc[0:0].assign(system="", paraphrase=pd.Series(dtype=float))
    return frame[["pair_id", "source", "system", "paraphrase", *metrics]]


def _comparison_notes(frame, max_comparisons) -> list[str]:
    labelled = frame[frame["paraphrase"].notna() & (frame["system"].fillna("") != "")]
    n = labelled["system"].nunique()
    kept = compared_systems(labelled, max_comparisons)
    if len(kept) == n:
        return []
    return [
        f"The pairwise system comparisons cover the {len(kept)} systems with the most labelled pairs "
        f"({len(kept) * (len(kept) - 1) // 2:,} comparisons, at most {max_comparisons:,}); "
        f"the other {n - len(kept):,} of {n:,} systems are in the systems table only."
    ]
