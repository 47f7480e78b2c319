"""Breakdowns beyond the paper: judges by English level, and metrics by generator or template."""

import numpy as np
import pandas as pd

from reports.analysis.classification import best_threshold, scan_thresholds
from reports.analysis.common import labelled_scores, orient
from reports.analysis.labels import human_labels
from reports.analysis.ranking import weighted_auc

ALL = "all"


def by_english_level(judgments: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """Per English level: judges, judgments, Don't know share, mean answer, agreement with gold and with the others.

    `agreement_with_others`: share of a judgment's binary votes equal to the strict majority
    of the *other* judges' votes on the pair (pairs without such a majority left out).
    """
    columns = [
        "english_level",
        "n_judges",
        "n_judgments",
        "share_dont_know",
        "mean_ordinal",
        "agreement_with_gold",
        "n_with_gold",
        "agreement_with_others",
        "n_with_others",
    ]
    if judgments.empty:
        return pd.DataFrame(columns=columns)
    work = judgments.assign(
        pair_id=judgments["pair_id"].astype(str),
        english_level=judgments["english_level"].fillna("").replace("", "unknown"),
        vote=judgments["vote"].astype(float),
        ordinal=judgments["rating"].astype(float),
    )
    judged = judged_rows(frame, work["pair_id"])  # the pairs a judgment names, not the whole corpus
    gold = judged.set_index(judged["pair_id"].astype(str))["gold_label"]
    work["gold"] = work["pair_id"].map(gold).astype(float)
    work["is_yes"], work["is_no"] = work["vote"] == 1, work["vote"] == 0
    yes = work.groupby("pair_id")["is_yes"].transform("sum")
    no = work.groupby("pair_id")["is_no"].transform("sum")
    yes_others, no_others = yes - (work["vote"] == 1), no - (work["vote"] == 0)
    work["others"] = np.where(yes_others > no_others, 1.0, np.where(no_others > yes_others, 0.0, np.nan))
    rows = []
    for level, part in [*work.groupby("english_level", sort=True), (ALL, work)]:
        voted = part[part["vote"].notna()]
        with_gold = voted[voted["gold"].notna()]
        with_others = voted[voted["others"].notna()]
        rows.append(
            {
                "english_level": level,
                "n_judges": part["judge"].nunique(),
                "n_judgments": len(part),
                "share_dont_know": float(part["abstained"].astype(bool).mean()),
                "mean_ordinal": part["ordinal"].mean(),
                "agreement_with_gold": (with_gold["vote"] == with_gold["gold"]).mean() if len(with_gold) else np.nan,
                "n_with_gold": len(with_gold),
                "agreement_with_others": (
                    (with_others["vote"] == with_others["others"]).mean() if len(with_others) else np.nan
                ),
                "n_with_others": len(with_others),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def judged_rows(frame, pair_ids) -> pd.DataFrame:
    """The rows of `frame` whose pair a judgment names, in frame order: on a 400,000-pair corpus with a few
    thousand judged pairs, the per-level joins then copy those rows only."""
    return frame[frame["pair_id"].astype(str).isin(set(pair_ids))]


GROUP_COLUMNS = [
    "group_by",
    "group",
    "metric",
    "n",
    "n_paraphrase",
    "n_non_paraphrase",
    "mean_score",
    "auc",
    "best_accuracy",
    "threshold",
]


def _metric_rows(part, metrics, directions, **group):
    """Per metric on the labelled rows of `part`: size, classes, mean score, AUC and best accuracy."""
    rows = []
    for metric in metrics:
        scores, labels = labelled_scores(part, metric)
        if len(scores) == 0:
            continue
        best = best_threshold(scan_thresholds(scores, labels, directions[metric]))
        auc = weighted_auc(orient(scores, directions[metric]), labels, np.ones((len(scores), 1)))[0]
        rows.append(
            {
                **group,
                "metric": metric,
                "n": len(scores),
                "n_paraphrase": int(labels.sum()),
                "n_non_paraphrase": int((~labels).sum()),
                "mean_score": float(scores.mean()),
                "auc": auc,
                "best_accuracy": best["accuracy"],
                "threshold": best["threshold"],
            }
        )
    return rows


def by_group(frame: pd.DataFrame, metrics, directions, columns=("generator", "template")):
    """Per generator (and per template): size, classes, and per metric the mean score, AUC and best accuracy."""
    rows, notes = [], []
    for column in columns:
        if column not in frame or not frame[column].notna().any():
            notes.append(f"No pair records a {column}: the breakdown by {column} is empty.")
            continue
        labelled = frame[frame["paraphrase"].notna() & frame[column].notna()]
        for value, part in labelled.groupby(labelled[column].astype(str), sort=True):
            rows += _metric_rows(part, metrics, directions, group_by=column, group=value)
    return pd.DataFrame(rows, columns=GROUP_COLUMNS), notes


def by_english_level_metrics(frame: pd.DataFrame, judgments: pd.DataFrame, metrics, directions) -> pd.DataFrame:
    """The same metric rows per English level, each level's pairs labelled by the majority of that level's judges."""
    rows = []
    if judgments.empty:
        return pd.DataFrame(rows, columns=GROUP_COLUMNS)
    levels = judgments["english_level"].fillna("").replace("", "unknown")
    frame = judged_rows(frame, judgments["pair_id"].astype(str))  # an inner join keeps no other pair
    pairs = frame.drop(columns="paraphrase").set_index(frame["pair_id"].astype(str))
    for level, part in judgments.groupby(levels, sort=True):
        labelled = pairs.join(human_labels(part)["human_label"].rename("paraphrase"), how="inner")
        labelled = labelled[labelled["paraphrase"].notna()]
        rows += _metric_rows(labelled, metrics, directions, group_by="english_level", group=level)
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)
