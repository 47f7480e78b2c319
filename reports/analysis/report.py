"""The whole analysis of one label source, from the pairs, judgments and metric directions."""

from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from reports.analysis import agreement, breakdowns, classification, collection, oracle, ppi, ranking, systems, tables
from reports.analysis.collection import ROUND_KEYS
from reports.analysis.common import corpora, subsets
from reports.analysis.labels import attach_labels, label_distribution
from reports.analysis.memo import Memo
from reports.analysis.parallel import run_forked
from reports.analysis.present import SPECS, TABLES
from scoring.metrics.registry import title_of

# The files a report writes, in the order a reader meets them (`present.TABLES` declares each one).
TABLE_NAMES = [table.name for table in TABLES]
POINT_COLUMNS = ["pair_id", "corpus", "paraphrase", "edit_distance"]
# The step groups that take longest on a large corpus (each sorts every metric), handed out first.
LONGEST_GROUPS = ("classification", "auc")


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
    ppi_predictor: str | None = None  # the metric predicting labels in the estimates table; None: cross-fitted choice


@dataclass
class Report:
    settings: Settings
    metrics: list[str]
    directions: dict[str, str]
    corpora: list[str]
    tables: dict[str, pd.DataFrame]
    points: pd.DataFrame  # per pair (a random sample on large corpora): paraphrase, edit distance and scores
    summary: dict
    notes: list[str] = field(default_factory=list)
    # Each table's declaration (`present.Table`): the report's own, and those its task type adds.
    specs: dict = field(default_factory=lambda: dict(SPECS))


def build_report(
    pairs: pd.DataFrame,
    judgments: pd.DataFrame,
    directions: dict[str, str],
    *,
    answers=None,
    verdicts=None,
    memo: Memo | None = None,
    workers: int = 0,
    **options,
) -> Report:
    """Every table of the report; problems in the data become `notes`, never exceptions.

    `pairs`: pair_id, corpus, source, hypothesis (or its `edit_distance` to the source),
    gold_label, optional generator/template/system, one float column per metric; `judgments`:
    pair_id, judge, english_level, label (non-training); `answers`: per ParaPLUIE metric, its
    yes/no answer setting, shown beside its threshold-0 rows; `verdicts`: the LLM oracle's
    verdicts per pair (`oracle.verdicts_frame`), if any. `memo` reuses the steps whose inputs
    did not change since an earlier report (the live page); the tables are the same either way.
    `workers` (without a memo store): processes forked to compute the step groups at once (`parallel`).
    """
    settings = Settings(**options)
    memo = memo or Memo()
    frame, notes = _analysis_frame(pairs, judgments, settings.label_source)
    metrics, metric_notes = _scored_metrics(frame, directions)
    notes += metric_notes + tables.corpus_notes(frame)
    steps = _Steps(frame, judgments, metrics, directions, answers, settings, memo)
    result, step_notes = steps.tables(verdicts, workers if memo.store is None else 0)
    points, n_labelled = _figure_points(frame[POINT_COLUMNS + metrics], settings)
    notes += step_notes["systems"] + step_notes["estimates"] + _scale_notes(frame, settings)
    notes += [
        note for name in ("mbd", "table4", "rank_correlation", "agreement", "by_group") for note in step_notes[name]
    ]
    return Report(
        settings=settings,
        metrics=metrics,
        directions=dict(directions),
        corpora=corpora(frame),
        tables={name: result[name] for name in TABLE_NAMES},
        points=points,
        summary=_summary(frame, judgments, directions, points, n_labelled),
        notes=notes,
    )


def _analysis_frame(pairs, judgments, label_source):
    """The pairs with their labels and edit distance (sentences dropped: every row selection stays cheap)."""
    frame, notes = attach_labels(pairs, judgments, label_source)
    frame["corpus"] = frame["corpus"].astype(str)
    if "system" not in frame:
        frame["system"] = ""
    if "edit_distance" not in frame:
        frame["edit_distance"] = tables.edit_distances(frame["source"].tolist(), frame["hypothesis"].tolist())
    return frame.drop(columns=["hypothesis"], errors="ignore"), notes


def _scored_metrics(frame, directions):
    """The metrics with scores (their columns made float, in place), and notes on partial or constant ones."""
    metrics, notes = [], []
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
    return metrics, notes


def _summary(frame, judgments, directions, points, n_labelled):
    return {
        "n_pairs": len(frame),
        "n_labelled": int(frame["paraphrase"].notna().sum()),
        "n_judgments": len(judgments),
        "n_judges": int(judgments["judge"].nunique()) if len(judgments) else 0,
        "n_scored": {m: int(frame[m].notna().sum()) if m in frame else 0 for m in directions},
        "n_points_sampled_from": n_labelled if len(points) < n_labelled else None,
    }


class _Steps:
    """The report's steps, each run through the memo on exactly the columns its key covers.

    A step is handed only the columns it declares (`run`), so it cannot read anything its
    stored result would not be keyed on; steps that read the judgments are keyed on them too.
    """

    def __init__(self, frame, judgments, metrics, directions, answers, settings, memo):
        self.frame, self.judgments, self.metrics = frame, judgments, metrics
        self.directions, self.answers, self.settings, self.memo = directions, answers or {}, settings, memo
        # The corpus as categories for the steps that split by corpus only: coded once, not once a step.
        self.corpus = frame["corpus"].astype("category")

    def run(self, name, columns, compute, *, metrics=None, judgments=False, also_reads=(), **values):
        """`compute(part)` on the frame's `columns` (+ `metrics`), through the memo.

        `also_reads`: columns of the frame the step reads besides its part (keyed on them too).
        """
        metrics = self.metrics if metrics is None else metrics
        columns = [*(c for c in columns if c in self.frame), *metrics]

        def inputs():  # digested only when there is a store to look results up in
            found = {f"column:{c}": self.memo.column(self.frame, c) for c in [*columns, *also_reads]}
            found |= {"metrics": metrics, "directions": [self.directions[m] for m in metrics], **values}
            if judgments:
                found["judgments"] = self.memo.value(self.judgments)
            return found

        return self.memo.step(name, inputs, lambda: compute(self._part(columns, judgments)))

    def _part(self, columns, judgments):
        part = self.frame[columns]
        return part.assign(corpus=self.corpus) if "corpus" in columns and not judgments else part

    def per_metric(self, name, columns, compute, **values):
        """A step run once per metric, its tables concatenated in metric order: a metric's part is reused
        while its scores (and the columns) stay, whatever happens to the other metrics."""
        if not self.metrics:
            return self.run(name, columns, lambda part: compute(part, []), metrics=[], **values)
        parts = [
            self.run(name, columns, lambda part, m=metric: compute(part, [m]), metrics=[metric], **values)
            for metric in self.metrics
        ]
        tables_of = {key: pd.concat([p[0][key] for p in parts], ignore_index=True) for key in parts[0][0]}
        return tables_of, list(dict.fromkeys(note for p in parts for note in p[1]))

    def tables(self, verdicts, workers=0):
        """Every table by name, and each step's notes by step name: each step group of `present.TABLES`.

        The groups read nothing of each other: with `workers`, forked processes compute them at once
        (the longest first), with a memo that keeps nothing (a child's store would be the parent's).
        """
        result, notes = {}, {}
        groups = sorted(dict.fromkeys(table.build for table in TABLES), key=lambda group: group not in LONGEST_GROUPS)
        computed = run_forked([partial(getattr(self, f"_{group}"), verdicts) for group in groups], workers)
        for group, (tables_of_group, notes_of_group) in zip(groups, computed):
            declared = {table.name for table in TABLES if table.build == group}
            if set(tables_of_group) != declared:  # a step and the declarations must agree
                raise AssertionError(f"step {group} made {sorted(tables_of_group)}, declared {sorted(declared)}")
            result |= tables_of_group
            notes |= notes_of_group
        return result, notes

    def _oracle(self, verdicts):
        return {"oracle": oracle.oracle_table(self.frame, verdicts)}, {}

    def _systems(self, _verdicts):
        s = self.settings
        system_tables, system_notes = self.run(
            "systems",
            ["pair_id", "source", "system", "paraphrase"],
            lambda part: systems.system_report(
                part, self.judgments, self.metrics, self.directions, n_bootstrap=s.n_bootstrap, seed=s.seed,
                max_comparisons=s.max_system_comparisons,
            ),
            judgments=True, settings=(s.n_bootstrap, s.seed, s.max_system_comparisons),
        )  # fmt: skip
        return system_tables, {"systems": system_notes}

    def _estimates(self, _verdicts):
        """Prediction-powered estimates of the paraphrase rates (`ppi`)."""
        s = self.settings
        estimates, notes = self.run(
            "estimates",
            ["pair_id", "system", "paraphrase", "choice_probability", "chosen"],
            lambda part: ppi.estimates_table(
                part, self.metrics, self.directions, predictor=s.ppi_predictor, seed=s.seed
            ),
            settings=(s.ppi_predictor, s.seed),
        )
        selection, selection_notes = self.run(
            "selection",
            ["pair_id", "paraphrase", "generator", "template", "selected"],
            lambda part: ppi.selection_table(
                part, self.metrics, self.directions, predictor=s.ppi_predictor, seed=s.seed
            ),
            settings=(s.ppi_predictor, s.seed),
        )
        rounds = self.run(
            "collection_rounds",
            ["paraphrase", "selected", "sent_to_judges", *ROUND_KEYS],
            lambda part: collection.rounds_table(part),
            metrics=[],
        )
        tables = {"estimates": estimates, "selection": selection, "collection_rounds": rounds}
        return tables, {"estimates": notes + selection_notes}

    def _classification(self, _verdicts):
        """Tables 1, 3 (with the MBD) and 4, the EER and the curves."""
        s, d, labelled = self.settings, self.directions, ["corpus", "paraphrase"]
        # One sort per metric and corpus serves Table 3, the EER table and both curve tables.
        thresholds, _ = self.per_metric(
            "thresholds",
            labelled,
            lambda part, metrics: (classification.threshold_tables(part, metrics, d, self.answers, s.curve_points), []),
            answers=self.answers, curve_points=s.curve_points,
        )  # fmt: skip
        mbd, mbd_notes = self.run(
            "mbd",
            labelled,
            lambda part: classification.mixed_balanced(
                part, self.metrics, d, per_label=s.per_label, n_draws=s.n_draws, seed=s.seed, answers=self.answers
            ),
            answers=self.answers, settings=(s.per_label, s.n_draws, s.seed),
        )  # fmt: skip
        table1, _ = self.per_metric("table1", labelled, lambda part, ms: ({"table1": tables.table1(part, ms, d)}, []))
        table4, table4_notes = self.run(
            "table4", [*labelled, "edit_distance"], lambda part: tables.table4(part, self.metrics)
        )
        result = {"table1": table1["table1"], "table3": _with_mbd(thresholds.pop("table3"), mbd), "table4": table4}
        return result | thresholds, {"mbd": mbd_notes, "table4": table4_notes}

    def _auc(self, _verdicts):
        """The AUCs with their intervals, and the tests of their differences."""
        s, d = self.settings, self.directions
        auc, auc_tests = self.run(
            "auc",
            ["corpus", "paraphrase"],
            lambda part: ranking.auc_tables(part, self.metrics, d, n_bootstrap=s.n_bootstrap, seed=s.seed),
            settings=(s.n_bootstrap, s.seed),
        )
        return {"auc": auc, "auc_tests": auc_tests}, {}

    def _rankings(self, _verdicts):
        """One step for every metric: each corpus's labels are ranked once and shared by all metrics."""
        label_source = self.settings.label_source
        rank_correlation, rank_notes = self.run(
            "rank_correlation",
            ["corpus", ranking.RANK_TARGETS[label_source]],
            lambda part: ranking.rank_correlations(part, self.metrics, self.directions, label_source),
            label_source=label_source,
        )
        return {"rank_correlation": rank_correlation}, {"rank_correlation": rank_notes}

    def _judges(self, _verdicts):
        """What reads the judges' answers: their labels, agreement, English levels, and Table 2's ties."""
        pair_columns = [c for c in self.frame.columns if c not in self.metrics]
        min_shared = self.settings.min_shared
        agreement_frame, cohen, agreement_notes = self.run(
            "agreement",
            ["pair_id", "corpus"],
            lambda part: agreement.agreement_table(
                self.judgments, part.set_index("pair_id")["corpus"], min_shared=min_shared
            ),
            metrics=[], judgments=True, min_shared=min_shared,
        )  # fmt: skip
        by_group, group_notes = self.run(
            "by_group",
            ["corpus", "paraphrase", "generator", "template"],
            lambda part: _by_group(part, self.metrics, self.directions, self.judgments, pair_columns, self.frame),
            judgments=True, also_reads=pair_columns,
        )  # fmt: skip
        result = {
            "table2": self.run("table2", ["corpus", "paraphrase", "is_tie"], tables.table2, metrics=[]),
            "labels": label_distribution(self.judgments, self.frame.set_index("pair_id")["corpus"]),
            "agreement": agreement_frame,
            "cohen": cohen,
            "by_english_level": breakdowns.by_english_level(self.judgments, self.frame),
            "by_group": by_group,
        }
        return result, {"agreement": agreement_notes, "by_group": group_notes}


def _by_group(part, metrics, directions, judgments, pair_columns, frame):
    """By generator and template, then by the judges' English level (reading the judgments and every pair column)."""
    by_group, notes = breakdowns.by_group(part, metrics, directions)
    judged = breakdowns.judged_rows(frame, judgments["pair_id"].astype(str))  # rows first: 400,000 are not copied
    by_level = breakdowns.by_english_level_metrics(judged[[*pair_columns, *metrics]], judgments, metrics, directions)
    return (pd.concat([by_group, by_level], ignore_index=True) if len(by_level) else by_group), notes


def _figure_points(points, settings):
    """The labelled points Figure 2 draws (a seeded random sample above `figure_points`) and how many there were."""
    labelled = points[points["paraphrase"].notna()]
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
    if int(frame["paraphrase"].notna().sum()) > settings.figure_points:
        notes.append(f"Figure 2 draws a random sample of {settings.figure_points:,} labelled pairs.")
    if any(int(rows["paraphrase"].notna().sum()) > ranking.BOOTSTRAP_MAX_PAIRS for _name, rows in subsets(frame)):
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
