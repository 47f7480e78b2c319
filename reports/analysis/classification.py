"""Paraphrase classification by a threshold on a metric's score (paper, section 5.2 and A.5).

A pair is predicted a paraphrase when its score is at least as close as the threshold
(`metrics.base.called_paraphrase`, the one rule, also used by `manage.py parapluie`).
When several thresholds reach the best accuracy, the single threshold reported is the
strictest of them and `threshold_low`/`threshold_high` give the lowest and highest.
Every distinct score is a candidate threshold; one sort and cumulative sums give the
confusion counts at all of them (O(n log n)).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics.base import called_paraphrase
from metrics.registry import natural_threshold_of
from reports.analysis.common import (
    HIGHER,
    closest_first,
    corpora,
    evenly_spaced_positions,
    labelled_rows,
    labelled_scores,
    orient,
    safe_divide,
    suborder,
    subset_masks,
)
from reports.analysis.labels import CLASS_NAMES
from reports.analysis.vocabulary import title_for

RATE_NAMES = ["accuracy", "f1", "recall", "precision"]


@dataclass
class Scan:
    """Confusion counts at each distinct score taken as threshold, strictest first."""

    thresholds: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    n_paraphrase: int
    n_non_paraphrase: int
    order: np.ndarray  # positions of the pairs, closest first (ties in input order): the one sort, reused

    @property
    def fn(self):
        return self.n_paraphrase - self.tp

    @property
    def tn(self):
        return self.n_non_paraphrase - self.fp

    def rates(self) -> dict[str, np.ndarray]:
        return rates(self.tp, self.fp, self.fn, self.tn)


def rates(tp, fp, fn, tn) -> dict[str, np.ndarray]:
    """Accuracy, F1, recall and precision from confusion counts (NaN where undefined)."""
    tp, fp, fn, tn = (np.asarray(x, dtype=float) for x in (tp, fp, fn, tn))
    return {
        "accuracy": safe_divide(tp + tn, tp + fp + fn + tn),
        "f1": safe_divide(2 * tp, 2 * tp + fp + fn),
        "recall": safe_divide(tp, tp + fn),
        "precision": safe_divide(tp, tp + fp),
    }


def scan_thresholds(scores, labels, direction: str, order=None) -> Scan:
    """Confusion counts at every distinct score used as threshold; `order`: `closest_first` of the oriented scores,
    if made already."""
    oriented = orient(scores, direction)
    labels = np.asarray(labels, dtype=bool)
    order = closest_first(oriented) if order is None else order
    sorted_scores, sorted_labels = oriented[order], labels[order]
    # The last position of each run of equal scores: a threshold admits the whole run.
    last = np.flatnonzero(np.r_[sorted_scores[1:] != sorted_scores[:-1], True])
    tp = np.cumsum(sorted_labels)[last]
    fp = last + 1 - tp
    thresholds = sorted_scores[last] if direction == HIGHER else -sorted_scores[last]
    n_paraphrase = int(labels.sum())
    return Scan(thresholds, tp, fp, n_paraphrase, len(labels) - n_paraphrase, order)


# Which of the tied thresholds the single `threshold` is: the first in the scan's order,
# the highest score for a higher-is-closer metric, the lowest for a distance.
TIE_PICK = "strictest"
TIE_COLUMNS = ["threshold_low", "threshold_high", "n_tied", "threshold_pick"]


def best_threshold(scan: Scan) -> dict[str, float]:
    """The threshold with the best accuracy and the rates there; ties: see TIE_PICK and TIE_COLUMNS.

    `threshold_low`/`threshold_high` are the lowest and highest scores that, taken as
    threshold, reach the best accuracy; `n_tied` counts them (they need not be adjacent).
    """
    if len(scan.thresholds) == 0:
        return {"threshold": np.nan, **dict.fromkeys(RATE_NAMES, np.nan), **dict.fromkeys(TIE_COLUMNS[:3], np.nan)}
    values = scan.rates()
    best = int(np.argmax(values["accuracy"]))  # the scan is strictest first
    tied = scan.thresholds[values["accuracy"] == values["accuracy"][best]]
    return {
        "threshold": float(scan.thresholds[best]),
        **{name: float(values[name][best]) for name in RATE_NAMES},
        "threshold_low": float(tied.min()),
        "threshold_high": float(tied.max()),
        "n_tied": len(tied),
        "threshold_pick": TIE_PICK,
    }


def at_threshold(scores, labels, direction: str, threshold: float) -> dict[str, float]:
    """Rates when pairs at least as close as `threshold` are predicted paraphrases."""
    labels = np.asarray(labels, dtype=bool)
    predicted = called_paraphrase(scores, threshold, direction)
    tp = int((predicted & labels).sum())
    fp = int((predicted & ~labels).sum())
    fn = int(labels.sum()) - tp
    tn = len(labels) - int(labels.sum()) - fp
    values = rates(tp, fp, fn, tn)
    return {"threshold": float(threshold), **{name: float(values[name]) for name in RATE_NAMES}}


def equal_error_rate(scores, labels, direction: str) -> tuple[float, float]:
    """(EER, threshold): non-paraphrases are the spoofs; the point where FAR and FRR are closest.

    FAR = accepted non-paraphrases / non-paraphrases, FRR = rejected paraphrases /
    paraphrases; the points are the ROC curve's (reject-all first), EER = (FAR + FRR) / 2.
    """
    return _equal_error_rate(scan_thresholds(scores, labels, direction), direction)


def _equal_error_rate(scan: Scan, direction: str) -> tuple[float, float]:
    if scan.n_paraphrase == 0 or scan.n_non_paraphrase == 0:
        return np.nan, np.nan
    far = np.r_[0.0, scan.fp / scan.n_non_paraphrase]
    frr = np.r_[1.0, scan.fn / scan.n_paraphrase]
    best = int(np.argmin(np.abs(far - frr)))
    threshold = np.inf if direction == HIGHER else -np.inf
    if best > 0:
        threshold = scan.thresholds[best - 1]
    return float((far[best] + frr[best]) / 2), float(threshold)


def _counts(labels):
    n_paraphrase = int(labels.sum())
    return {"n": len(labels), "n_paraphrase": n_paraphrase, "n_non_paraphrase": len(labels) - n_paraphrase}


def _scanned_subsets(frame, metrics, directions, orders=None):
    """(metric, corpus, scores, labels, scan) for every metric and corpus (+ Global) with labelled scores.

    One sort per metric: each corpus's scan is in the order of Global's (`suborder` of a stable sort: exactly
    the corpus's own `closest_first`); `orders` (`common.ScoreOrders` of `frame`): that sort, made already.
    """
    parts = list(subset_masks(frame))
    for metric in metrics:
        kept = labelled_rows(frame, metric)
        every_score, every_label = labelled_scores(frame, metric)
        if orders is not None and metric in orders:
            order_of_all = orders.closest_first(metric, kept)
        else:
            order_of_all = closest_first(orient(every_score, directions[metric]))
        for corpus, members in parts:
            in_corpus = np.ones(len(every_score), dtype=bool) if members is None else members[kept]
            scores, labels = every_score[in_corpus], every_label[in_corpus]
            if len(scores):
                order = suborder(order_of_all, in_corpus)
                yield metric, corpus, scores, labels, scan_thresholds(scores, labels, directions[metric], order)


TABLE3_COLUMNS = [
    "metric",
    "corpus",
    "threshold_kind",
    "threshold",
    *RATE_NAMES,
    *TIE_COLUMNS,
    "answer",
    "n",
    "n_paraphrase",
    "n_non_paraphrase",
]
EER_COLUMNS = ["metric", "corpus", "eer", "threshold", "n", "n_paraphrase", "n_non_paraphrase"]
THRESHOLD_CURVE_COLUMNS = ["metric", "corpus", "threshold", *RATE_NAMES]
RANK_CURVE_COLUMNS = ["metric", "corpus", "rank", "score", *RATE_NAMES]


def threshold_tables(frame: pd.DataFrame, metrics, directions, answers=None, max_points=None, orders=None) -> dict:
    """Table 3 (MBD aside), the EER table and both curve tables, from one scan (one sort) per metric and corpus.

    Curves are rates as functions of the threshold and of the rank (top-k predicted paraphrases);
    with `max_points`, each keeps that many evenly spaced points (ends kept) instead of one per pair.

    The four tables read each scan in turn, which is then dropped: on large corpora scans never pile up.
    `orders`: the metrics' `common.ScoreOrders` on `frame`, when sorted already.
    """
    table3_rows, eer_rows, threshold_parts, rank_parts = [], [], [], []
    for scanned in _scanned_subsets(frame, metrics, directions, orders):
        table3_rows += _table3_rows(scanned, directions, answers)
        eer_rows.append(_eer_row(scanned, directions))
        threshold_parts.append(_threshold_curve(scanned, max_points))
        rank_parts.append(_rank_curve(scanned, max_points))
    return {
        "table3": pd.DataFrame(table3_rows, columns=TABLE3_COLUMNS),
        "eer": pd.DataFrame(eer_rows, columns=EER_COLUMNS),
        "curves_threshold": _concat(threshold_parts, THRESHOLD_CURVE_COLUMNS),
        "curves_rank": _concat(rank_parts, RANK_CURVE_COLUMNS),
    }


def _table3_rows(scanned, directions, answers):
    """Best a-posteriori threshold of one metric and corpus, and the a-priori one at the metric's natural
    threshold, for a metric the registry gives one (ParaPLUIE's 0).

    `answers` maps a ParaPLUIE metric to its yes/no answer setting (PARAPLUIE_ANSWER), shown
    beside its threshold-0 rows because the setting moves what 0 means.
    """
    metric, corpus, scores, labels, scan = scanned
    counts = _counts(labels)
    rows = [{"metric": metric, "corpus": corpus, "threshold_kind": "a_posteriori", **best_threshold(scan), **counts}]
    natural = natural_threshold_of(metric)
    if natural is not None:
        prior = at_threshold(scores, labels, directions[metric], natural)
        answer = (answers or {}).get(metric, "")
        rows.append(
            {"metric": metric, "corpus": corpus, "threshold_kind": "a_priori", **prior, "answer": answer, **counts}
        )
    return rows


def _eer_row(scanned, directions):
    metric, corpus, _scores, labels, scan = scanned
    eer, threshold = _equal_error_rate(scan, directions[metric])
    return {"metric": metric, "corpus": corpus, "eer": eer, "threshold": threshold, **_counts(labels)}


def _concat(parts, columns):
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def _threshold_curve(scanned, max_points):
    """Rates at the evenly spaced thresholds the curve keeps (rates are per point: only those are computed)."""
    metric, corpus, _scores, _labels, scan = scanned
    keep = evenly_spaced_positions(len(scan.thresholds), max_points)
    values = rates(scan.tp[keep], scan.fp[keep], scan.fn[keep], scan.tn[keep])
    part = pd.DataFrame({"threshold": scan.thresholds[keep], **values})
    part.insert(0, "corpus", corpus)
    part.insert(0, "metric", metric)
    return part


def _rank_curve(scanned, max_points):
    """Rates when the k closest pairs (ties in input order: the scan's order) are predicted paraphrases, k = 1..n."""
    metric, corpus, scores, labels, scan = scanned
    keep = evenly_spaced_positions(len(scores), max_points)
    tp = np.cumsum(labels[scan.order])[keep]
    rank = np.arange(1, len(scores) + 1)[keep]
    fp = rank - tp
    n_paraphrase = int(labels.sum())
    values = rates(tp, fp, n_paraphrase - tp, len(labels) - n_paraphrase - fp)
    part = pd.DataFrame({"rank": rank, "score": scores[scan.order[keep]], **values})
    part.insert(0, "corpus", corpus)
    part.insert(0, "metric", metric)
    return part


# The Mixed Balanced Dataset (paper, 5.2): per label, `per_label` pairs from each corpus, many draws.

MBD = "MBD"


def draw_balanced(corpus, labels, *, per_label: int, n_draws: int, seed: int) -> np.ndarray:
    """Positions (n_draws x size) of the pairs in each draw: per corpus and label, `per_label` without replacement.

    A group smaller than `per_label` is taken whole in every draw.
    """
    rng = np.random.default_rng(seed)
    corpus, labels = np.asarray(corpus), np.asarray(labels, dtype=bool)
    blocks = []
    for name in dict.fromkeys(corpus):
        for value in (True, False):
            group = np.flatnonzero((corpus == name) & (labels == value))
            if len(group) <= per_label:
                blocks.append(np.broadcast_to(group, (n_draws, len(group))))
            else:
                # Draw by draw: the same numbers as one (n_draws x group) array, without holding it
                # (100 draws of a 240,000-pair group were 400 MB of keys and positions at once).
                picked = np.empty((n_draws, per_label), dtype=np.intp)
                for draw in range(n_draws):
                    picked[draw] = np.argpartition(rng.random(len(group)), per_label - 1)[:per_label]
                blocks.append(group[picked])
    return np.concatenate(blocks, axis=1) if blocks else np.empty((n_draws, 0), dtype=int)


def best_rows(oriented: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """`best_threshold` for each row of a 2-D array of oriented scores at once; thresholds oriented."""
    order = np.argsort(-oriented, axis=1, kind="stable")
    sorted_scores = np.take_along_axis(oriented, order, axis=1)
    sorted_labels = np.take_along_axis(labels, order, axis=1)
    tp = np.cumsum(sorted_labels, axis=1)
    fp = np.arange(1, oriented.shape[1] + 1) - tp
    n_paraphrase = sorted_labels.sum(axis=1, keepdims=True)
    n = oriented.shape[1]
    is_last = np.ones_like(sorted_labels, dtype=bool)
    is_last[:, :-1] = sorted_scores[:, 1:] != sorted_scores[:, :-1]
    values = rates(tp, fp, n_paraphrase - tp, n - n_paraphrase - fp)
    accuracy = np.where(is_last, values["accuracy"], -np.inf)
    best = np.argmax(accuracy, axis=1)[:, None]
    result = {name: np.take_along_axis(values[name], best, axis=1)[:, 0] for name in values}
    result["threshold"] = np.take_along_axis(sorted_scores, best, axis=1)[:, 0]
    tied = accuracy == np.take_along_axis(accuracy, best, axis=1)
    result["threshold_low"] = np.where(tied, sorted_scores, np.inf).min(axis=1)  # oriented, like `threshold`
    result["threshold_high"] = np.where(tied, sorted_scores, -np.inf).max(axis=1)
    result["n_tied"] = tied.sum(axis=1)
    return result


def mixed_balanced(
    frame: pd.DataFrame, metrics, directions, *, per_label=45, n_draws=100, seed=2024, answers=None
) -> tuple[pd.DataFrame, list[str]]:
    """Table 3's MBD column: mean and 95% confidence half-width over `n_draws` balanced draws.

    The half-width is 1.96 x the standard deviation over draws / sqrt(n_draws): a confidence
    interval of the mean, as the paper's small ±0.00 suggest.
    """
    labelled = frame[frame["paraphrase"].notna()]
    notes, any_larger = _mbd_notes(labelled, per_label)
    rows = []
    draws_of_mask = {}
    for metric in metrics:
        eligible = labelled[labelled[metric].notna()]
        if eligible.empty:
            continue
        labels = eligible["paraphrase"].to_numpy(dtype=float) == 1
        key = eligible.index.to_numpy().tobytes()
        if key not in draws_of_mask:
            draws_of_mask[key] = draw_balanced(
                eligible["corpus"].to_numpy(), labels, per_label=per_label, n_draws=n_draws, seed=seed
            )
        draws = draws_of_mask[key]
        oriented = orient(eligible[metric].to_numpy(dtype=float), directions[metric])[draws]
        drawn_labels = labels[draws]
        best = best_rows(oriented, drawn_labels)
        if directions[metric] != HIGHER:  # back from oriented scores: a distance's low and high swap
            best["threshold"] = -best["threshold"]
            best["threshold_low"], best["threshold_high"] = -best["threshold_high"], -best["threshold_low"]
        counts = {"n": draws.shape[1], "n_paraphrase": int(drawn_labels[0].sum())}
        counts["n_non_paraphrase"] = counts["n"] - counts["n_paraphrase"]
        pick = {"threshold_pick": TIE_PICK}  # per draw; `threshold_low`/`_high` are means of the draws' bounds
        rows.append(
            {"metric": metric, "corpus": MBD, "threshold_kind": "a_posteriori", **_mean_ci(best), **pick, **counts}
        )
        natural = natural_threshold_of(metric)
        if natural is not None:
            predicted = called_paraphrase(oriented, orient([natural], directions[metric])[0], HIGHER)
            tp = (predicted & drawn_labels).sum(axis=1)
            fp = (predicted & ~drawn_labels).sum(axis=1)
            prior = rates(tp, fp, counts["n_paraphrase"] - tp, counts["n_non_paraphrase"] - fp)
            prior["threshold"] = np.full(n_draws, natural)
            answer = {"answer": (answers or {}).get(metric, "")}
            rows.append(
                {"metric": metric, "corpus": MBD, "threshold_kind": "a_priori", **_mean_ci(prior), **answer, **counts}
            )
    if rows and not any_larger:
        notes.append(
            f"MBD: no corpus has more than {per_label} pairs of a label, so every draw is the same and the CIs are 0."
        )
    return pd.DataFrame(rows), notes


def _mbd_notes(labelled, per_label):
    """Notes on the corpora with fewer than `per_label` pairs of a label, and whether any has more."""
    notes, any_larger = [], False
    for corpus in corpora(labelled):
        rows_of_corpus = labelled[labelled["corpus"] == corpus]
        for value, name in CLASS_NAMES.items():
            available = int((rows_of_corpus["paraphrase"] == value).sum())
            any_larger = any_larger or available > per_label
            if available < per_label:
                notes.append(
                    f"MBD: corpus {corpus} has {available} labelled {title_for(name).lower()} pair(s), "
                    f"fewer than {per_label}; each draw uses all {available}."
                )
    return notes, any_larger


def _mean_ci(values: dict[str, np.ndarray]) -> dict[str, float]:
    result = {}
    for name in ["threshold", *RATE_NAMES, "threshold_low", "threshold_high"]:
        if name not in values:  # the a-priori rows have one threshold, no ties
            continue
        column = np.asarray(values[name], dtype=float)
        result[name] = float(np.nanmean(column)) if np.isfinite(column).any() else np.nan
        spread = np.nanstd(column, ddof=1) if np.isfinite(column).sum() > 1 else np.nan
        result[f"{name}_ci95"] = (
            float(1.96 * spread / np.sqrt(np.isfinite(column).sum())) if spread == spread else np.nan
        )
    return result
