"""The whole analysis of one label source, from the pairs, judgments and metric directions."""

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from reports.analysis import agreement, breakdowns, classification, oracle, ranking, systems, tables
from reports.analysis.common import corpora, subsets
from reports.analysis.labels import attach_labels, label_distribution
from scoring.metrics.registry import title_of

# The files a report writes, in the order a reader meets them; README.md lists their columns.
TABLE_NAMES = [
    "table1",
    "table2",
    "table3",
    "table4",
    "eer",
    "labels",
    "agreement",
    "cohen",
    "auc",
    "auc_tests",
    "rank_correlation",
    "by_english_level",
    "by_group",
    "curves_threshold",
    "curves_rank",
    "oracle",
    "systems",
    "system_pairwise",
    "system_correlation",
]
POINT_COLUMNS = ["pair_id", "corpus", "label", "edit_distance"]


@dataclass
class Settings:
    label_source: str = "human"
    seed: int = 2024
    per_label: int = 45  # MBD: pairs per label and corpus in each draw
    n_draws: int = 100
    n_bootstrap: int = 1000
    min_shared: int = 5  # pairwise Cohen's kappa: pairs two judges must share
    curve_points: int | None = 1000  # points per curve in the curve tables; None: one per pair
    figure_points: int = 20_000  # labelled pairs drawn (at random) in Figure 2; more is ink, not information
    max_system_comparisons: int | None = None  # rows of the pairwise system table at most; None: every two systems


@dataclass
class Report:
    settings: Settings
    metrics: list[str]
    directions: dict[str, str]
    corpora: list[str]
    tables: dict[str, pd.DataFrame]
    points: pd.DataFrame  # per pair (a random sample on large corpora): label, edit distance and scores
    summary: dict
    notes: list[str] = field(default_factory=list)


def build_report(
    pairs: pd.DataFrame, judgments: pd.DataFrame, directions: dict[str, str], *, answers=None, verdicts=None, **options
) -> Report:
    """Every table of the report; problems in the data become `notes`, never exceptions.

    `pairs`: pair_id, corpus, source, hypothesis, gold_label, optional generator/template, one
    float column per metric; `judgments`: pair_id, judge, english_level, label (non-training);
    `answers`: per ParaPLUIE metric, its yes/no answer setting, shown beside its threshold-0 rows.
    `verdicts`: the LLM oracle's verdicts per pair (`oracle.verdicts_frame`), if any.
    """
    settings = Settings(**options)
    frame, notes = attach_labels(pairs, judgments, settings.label_source)
    frame["corpus"] = frame["corpus"].astype(str)
    if "system" not in frame:
        frame["system"] = ""
    frame["edit_distance"] = tables.edit_distances(frame["source"].tolist(), frame["hypothesis"].tolist())
    # The sentences are done with; dropping them keeps every row selection below cheap.
    frame = frame.drop(columns=["hypothesis"])
    metrics = []
    for metric in directions:
        if metric not in frame or not frame[metric].notna().any():
            notes.append(f"{title_of(metric)} has no scores yet.")
            continue
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce").astype(float)
        metrics.append(metric)
        scored = frame[metric].notna()
        if not scored.all():
            notes.append(
                f"{title_of(metric)} has scored {int(scored.sum())} of {len(frame)} pairs so far; its rows use those."
            )
        if np.ptp(frame.loc[scored, metric].to_numpy()) == 0:
            notes.append(
                f"{title_of(metric)} gives the same score to every pair: thresholds and correlations say nothing."
            )
    notes += tables.corpus_notes(frame)
    system_tables, system_notes = systems.system_report(
        frame,
        judgments,
        metrics,
        directions,
        n_bootstrap=settings.n_bootstrap,
        seed=settings.seed,
        max_comparisons=settings.max_system_comparisons,
    )
    notes += system_notes

    # One sort per metric and corpus serves Table 3, the EER table and both curve tables.
    threshold_tables = classification.threshold_tables(frame, metrics, directions, answers, settings.curve_points)
    mbd, mbd_notes = classification.mixed_balanced(
        frame,
        metrics,
        directions,
        per_label=settings.per_label,
        n_draws=settings.n_draws,
        seed=settings.seed,
        answers=answers,
    )
    table4, table4_notes = tables.table4(frame, metrics)
    auc, auc_tests = ranking.auc_tables(
        frame, metrics, directions, n_bootstrap=settings.n_bootstrap, seed=settings.seed
    )
    rank_correlation, rank_notes = ranking.rank_correlations(frame, metrics, directions, settings.label_source)
    corpus_of_pair = frame.set_index("pair_id")["corpus"]
    agreement_frame, cohen, agreement_notes = agreement.agreement_table(
        judgments, corpus_of_pair, min_shared=settings.min_shared
    )
    by_group, group_notes = breakdowns.by_group(frame, metrics, directions)
    by_level = breakdowns.by_english_level_metrics(frame, judgments, metrics, directions)
    by_group = pd.concat([by_group, by_level], ignore_index=True) if len(by_level) else by_group
    points, n_labelled = _figure_points(frame[POINT_COLUMNS + metrics], settings)
    notes += _scale_notes(frame, settings)
    notes += mbd_notes + table4_notes + rank_notes + agreement_notes + group_notes

    result = {
        "table1": tables.table1(frame, metrics, directions),
        "table2": tables.table2(frame),
        "table3": _with_mbd(threshold_tables["table3"], mbd),
        "table4": table4,
        "eer": threshold_tables["eer"],
        "labels": label_distribution(judgments, corpus_of_pair),
        "agreement": agreement_frame,
        "cohen": cohen,
        "auc": auc,
        "auc_tests": auc_tests,
        "rank_correlation": rank_correlation,
        "by_english_level": breakdowns.by_english_level(judgments, frame),
        "by_group": by_group,
        "curves_threshold": threshold_tables["curves_threshold"],
        "curves_rank": threshold_tables["curves_rank"],
        "oracle": oracle.oracle_table(frame, verdicts),
        **system_tables,
    }
    summary = {
        "n_pairs": len(frame),
        "n_labelled": int(frame["label"].notna().sum()),
        "n_judgments": len(judgments),
        "n_judges": int(judgments["judge"].nunique()) if len(judgments) else 0,
        "n_scored": {m: int(frame[m].notna().sum()) if m in frame else 0 for m in directions},
        "n_points_sampled_from": n_labelled if len(points) < n_labelled else None,
    }
    return Report(
        settings=settings,
        metrics=metrics,
        directions=dict(directions),
        corpora=corpora(frame),
        tables=result,
        points=points,
        summary=summary,
        notes=notes,
    )


def _figure_points(points, settings):
    """The labelled points Figure 2 draws (a seeded random sample above `figure_points`) and how many there were."""
    labelled = points[points["label"].notna()]
    if len(labelled) <= settings.figure_points:
        return labelled.copy(), len(labelled)
    return labelled.sample(settings.figure_points, random_state=settings.seed).sort_index(), len(labelled)


def _scale_notes(frame, settings):
    notes = []
    if settings.curve_points is not None and len(frame) > settings.curve_points:
        notes.append(
            f"Curve tables keep {settings.curve_points:,} evenly spaced points per metric and corpus "
            "(ends kept); ask for full curves (report --full-curves) to get one row per pair."
        )
    if int(frame["label"].notna().sum()) > settings.figure_points:
        notes.append(f"Figure 2 draws a random sample of {settings.figure_points:,} labelled pairs.")
    if any(int(rows["label"].notna().sum()) > ranking.BOOTSTRAP_MAX_PAIRS for _name, rows in subsets(frame)):
        notes.append(
            f"AUC intervals and tests of subsets over {ranking.BOOTSTRAP_MAX_PAIRS:,} labelled pairs use DeLong's "
            "method (n_bootstrap 0) instead of the bootstrap."
        )
    return notes


def _with_mbd(table3, mbd):
    if mbd.empty:
        return table3
    ci_columns = [c for c in mbd.columns if c.endswith("_ci95")]
    merged = pd.concat([table3, mbd], ignore_index=True)
    order = {metric: i for i, metric in enumerate(dict.fromkeys(merged["metric"]))}
    merged = merged.sort_values("metric", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    return merged[[*table3.columns, *ci_columns]]
