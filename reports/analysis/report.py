"""The whole analysis of one label source, from the pairs, judgments and metric directions."""

from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

import numpy as np
import pandas as pd

from metrics.registry import title_of
from reports.analysis import (
    agreement,
    breakdowns,
    classification,
    collection,
    meta,
    oracle,
    ppi,
    ranking,
    systems,
    tables,
)
from reports.analysis.collection import ROUND_KEYS
from reports.analysis.common import ScoreOrders, corpora, failed_table, failure_note, failure_notes
from reports.analysis.labels import answer_distribution, attach_labels, judge_competence, judge_votes
from reports.analysis.ppi import ACTIVE_DESIGN
from reports.analysis.present import SPECS, TABLES

# The files a report writes, in the order a reader meets them (`present.TABLES` declares each one).
TABLE_NAMES = [table.name for table in TABLES]
POINT_COLUMNS = ["pair_id", "corpus", "paraphrase", "edit_distance"]
# The steps whose notes a report keeps by name (`Report.notes_by_step`), whichever groups compute them.
STEP_NOTES = (
    "systems", "estimates", "mbd", "table4", "rank_correlation", "agreement", "by_group", "meta", "calibration",
)  # fmt: skip
# The step groups that take longest (each sorts or resamples every metric), handed out first.
LONGEST_GROUPS = ("classification", "auc", "meta", "calibration")


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
    # How metrics are compared (`meta.Significance`): the test, what is resampled, the correction of the p-values.
    significance_method: str = "bootstrap"  # or "permutation" (Deutsch et al.'s perm-both)
    significance_unit: str = "pairs"  # or "sources": every candidate of a drawn source
    significance_correction: str = "holm"  # or "bonferroni", "none"

    def __post_init__(self):
        _ = self.significance  # a bad method, unit or correction is refused here, before any step runs

    @property
    def significance(self) -> meta.Significance:
        return meta.Significance(
            self.significance_method, self.significance_unit, self.n_bootstrap, self.significance_correction
        )


class Runner(Protocol):
    """How the steps of a report are run: `call(step, *args, **kwargs)` runs one step (a module-level function
    of its arguments), `map(calls)` independent groups of them. `Direct` runs them here, now; the reports app
    gives one that reuses earlier results and forks workers (`reports.machinery.memory.Memory`).
    `reuses`: whether `call` may return a result stored earlier instead of computing it."""

    reuses: bool

    def call(self, function, /, *args, **kwargs): ...

    def map(self, calls) -> list: ...


class Direct:
    """Every step computed here, now: the report of a notebook or a test."""

    reuses = False

    def call(self, function, /, *args, **kwargs):
        return function(*args, **kwargs)

    def map(self, calls) -> list:
        return [call() for call in calls]


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
    # The notes (also in `notes`) each step of the analysis wrote, by the step's name: a page shows a
    # step's notes when one of its sections shows what the step computed (`task_sections.base.Section.notes`).
    notes_by_step: dict[str, list[str]] = field(default_factory=dict)
    # Each table's declaration (`present.Table`): the report's own, and those its task type adds.
    specs: dict = field(default_factory=lambda: dict(SPECS))


def build_report(
    pairs: pd.DataFrame,
    judgments: pd.DataFrame,
    directions: dict[str, str],
    *,
    answers=None,
    verdicts=None,
    runner: Runner | None = None,
    **options,
) -> Report:
    """Every table of the report; problems in the data become `notes`, never exceptions.

    `pairs`: pair_id, corpus, source, hypothesis (or its `edit_distance` to the source),
    gold_label, optional generator/template/system, one float column per metric; `judgments`:
    pair_id, judge, english_level, label (non-training); `answers`: per ParaPLUIE metric, its
    yes/no answer setting, shown beside its threshold-0 rows; `verdicts`: the LLM oracle's
    verdicts per pair (`oracle.verdicts_frame`), if any. `runner` runs the steps (`Runner`; default
    `Direct`); the tables are the same whichever runs them.
    """
    settings = Settings(**options)
    frame, label_notes = _analysis_frame(pairs, judgments, settings.label_source)
    metrics, metric_notes = _scored_metrics(frame, directions)
    notes = label_notes + metric_notes + tables.corpus_notes(frame)
    steps = _Steps(frame, judgments, metrics, directions, answers, settings, runner or Direct())
    result, step_notes = steps.tables(verdicts)
    notes += failure_notes(result)
    points, n_labelled = _figure_points(frame[POINT_COLUMNS + metrics], settings)
    notes += step_notes["systems"] + step_notes["estimates"] + _scale_notes(frame, settings)
    notes += [note for name in STEP_NOTES[2:] for note in step_notes[name]]
    return Report(
        settings=settings,
        metrics=metrics,
        directions=dict(directions),
        corpora=corpora(frame),
        tables={name: result[name] for name in TABLE_NAMES},
        points=points,
        summary=_summary(frame, judgments, directions, points, n_labelled),
        notes=notes,
        notes_by_step={"labels": label_notes, **step_notes},
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
    """The report's steps, each a module-level function handed, as arguments, all it reads.

    A step gets only the columns it names (`part`), the directions of its metrics only, and the judgments
    only when it reads them: a runner that keys results on the arguments (`Runner`) keys them on exactly
    what the step reads.
    """

    def __init__(self, frame, judgments, metrics, directions, answers, settings, runner):
        self.frame, self.judgments, self.metrics = frame, judgments, metrics
        self.directions, self.answers, self.settings, self.runner = directions, answers or {}, settings, runner
        # The corpus as categories for the steps that split by corpus only: coded once, not once a step.
        self.corpus = frame["corpus"].astype("category")
        # Each metric sorted once for the four step groups that sort it, when every step is computed: a runner
        # that reuses stored results would sort for steps it never runs (and key their results on the sorts).
        self.sorted = {} if runner.reuses else self._shared_sorts()

    def _shared_sorts(self) -> dict:
        """{"orders": the metrics' `ScoreOrders`}, or {} if they cannot be made: each step then sorts for itself,
        and data that breaks a sort breaks only the steps that make it (`_apart`), not the whole report."""
        try:
            return {"orders": self._score_orders()}
        except Exception:  # noqa: BLE001 - whatever it was, the steps meet it again, each on its own
            return {}

    def _score_orders(self) -> ScoreOrders:
        """Every metric's sort on the rows with a label or a rank target: those the sorting steps read."""
        rows = self.frame["paraphrase"].notna().to_numpy()
        target = ranking.RANK_TARGETS.get(self.settings.label_source, "paraphrase")
        if target in self.frame:
            rows = rows | self.frame[target].notna().to_numpy()
        return ScoreOrders(self.frame, self.metrics, self.directions, rows)

    def part(self, columns, metrics=None, *, coded_corpus=True):
        """The frame's `columns` (those it has) and `metrics`' (default: every scored metric);
        the corpus as categories unless `coded_corpus` is False (steps that join it with the judgments)."""
        metrics = self.metrics if metrics is None else metrics
        part = self.frame[[*(c for c in columns if c in self.frame), *metrics]]
        return part.assign(corpus=self.corpus) if "corpus" in part and coded_corpus else part

    def directions_of(self, metrics=None) -> dict[str, str]:
        return {metric: self.directions[metric] for metric in (self.metrics if metrics is None else metrics)}

    def per_metric(self, function, columns, *args, **kwargs):
        """`function(part, metrics, directions, *args, **kwargs)` once per metric, its tables (one, or a dict of
        them) concatenated in metric order: a metric's part is reused while its scores (and the columns) stay,
        whatever happens to the other metrics."""
        groups = [[metric] for metric in self.metrics] or [[]]
        parts = [
            self.runner.call(function, self.part(columns, ms), ms, self.directions_of(ms), *args, **kwargs)
            for ms in groups
        ]
        if isinstance(parts[0], pd.DataFrame):
            return pd.concat(parts, ignore_index=True)
        return {key: pd.concat([part[key] for part in parts], ignore_index=True) for key in parts[0]}

    def tables(self, verdicts):
        """Every table by name, and each step's notes by step name: each step group of `present.TABLES`.

        The groups read nothing of each other: the runner may compute them at once (the longest first).
        """
        result, notes = {}, {step: [] for step in STEP_NOTES}
        groups = sorted(dict.fromkeys(table.build for table in TABLES), key=lambda group: group not in LONGEST_GROUPS)
        computed = self.runner.map([partial(self._apart, group, verdicts) for group in groups])
        for group, (tables_of_group, notes_of_group) in zip(groups, computed):
            declared = {table.name for table in TABLES if table.build == group}
            if set(tables_of_group) != declared:  # a step and the declarations must agree
                raise AssertionError(f"step {group} made {sorted(tables_of_group)}, declared {sorted(declared)}")
            result |= tables_of_group
            notes |= notes_of_group
        return result, notes

    def _apart(self, group, verdicts):
        """Step group `group`; one that raises leaves its own tables empty with a note (`common.failed_table`),
        and every other group's stand: no data, however degenerate, takes the whole report down."""
        try:
            return getattr(self, f"_{group}")(verdicts)
        except Exception as error:  # noqa: BLE001 - whatever it was, it loses its own tables and no other
            declared = [table for table in TABLES if table.build == group]
            note = failure_note(", ".join(table.heading for table in declared), error)
            return {table.name: failed_table(note) for table in declared}, {}

    def _oracle(self, verdicts):
        return {"oracle": oracle.oracle_table(self.frame, verdicts)}, {}

    def _systems(self, _verdicts):
        """The systems table (it reads the judgments) and the systems' comparisons (new judgments leave them be
        unless they move the labels)."""
        s = self.settings
        part = self.part(["pair_id", "source", "system", "paraphrase"], coded_corpus=False)
        table = self.runner.call(
            systems.system_report, part, self.judgments, self.metrics, n_bootstrap=s.n_bootstrap, seed=s.seed
        )
        comparisons, system_notes = self.runner.call(
            systems.system_comparisons, part, self.metrics, self.directions_of(),
            n_bootstrap=s.n_bootstrap, seed=s.seed, max_comparisons=s.max_system_comparisons,
        )  # fmt: skip
        return {"systems": table, **comparisons}, {"systems": system_notes}

    def _estimates(self, _verdicts):
        """Prediction-powered estimates of the paraphrase rates (`ppi`)."""
        s, run = self.settings, self.runner.call
        estimates, notes = run(
            ppi.estimates_table,
            self.part(["pair_id", "system", "paraphrase", *ACTIVE_DESIGN]),
            self.metrics, self.directions_of(), predictor=s.ppi_predictor, seed=s.seed,
        )  # fmt: skip
        selection, selection_notes = run(
            ppi.selection_table,
            self.part(["pair_id", "paraphrase", "generator", "template", "selected", *ACTIVE_DESIGN]),
            self.metrics, self.directions_of(), predictor=s.ppi_predictor, seed=s.seed,
        )  # fmt: skip
        rounds = run(collection.rounds_table, self.part(["paraphrase", "selected", "sent_to_judges", *ROUND_KEYS], []))
        tables = {"estimates": estimates, "selection": selection, "collection_rounds": rounds}
        return tables, {"estimates": notes + selection_notes}

    def _classification(self, _verdicts):
        """Tables 1, 3 (with the MBD) and 4, the EER and the curves."""
        s, labelled = self.settings, ["corpus", "paraphrase"]
        # One sort per metric and corpus serves Table 3, the EER table and both curve tables.
        thresholds = self.per_metric(
            classification.threshold_tables, labelled, self.answers, s.curve_points, **self.sorted
        )
        mbd, mbd_notes = self.runner.call(
            classification.mixed_balanced,
            self.part(labelled), self.metrics, self.directions_of(),
            per_label=s.per_label, n_draws=s.n_draws, seed=s.seed, answers=self.answers,
        )  # fmt: skip
        table1 = self.per_metric(tables.table1, labelled)
        table4, table4_notes = self.runner.call(tables.table4, self.part([*labelled, "edit_distance"]), self.metrics)
        result = {"table1": table1, "table3": _with_mbd(thresholds.pop("table3"), mbd), "table4": table4}
        return result | thresholds, {"mbd": mbd_notes, "table4": table4_notes}

    def _auc(self, _verdicts):
        """The AUCs with their intervals, and the tests of their differences."""
        s = self.settings
        auc, auc_tests = self.runner.call(
            ranking.auc_tables,
            self.part(["corpus", "paraphrase"]), self.metrics, self.directions_of(),
            n_bootstrap=s.n_bootstrap, seed=s.seed, **self.sorted,
        )  # fmt: skip
        return {"auc": auc, "auc_tests": auc_tests}, {}

    def _meta(self, _verdicts):
        """The meta-evaluation (`meta`): system-level accuracy, significance clusters, within-source ranking,
        the human ceiling, and each judge's competence (calibration is `_calibration`)."""
        s, run = self.settings, self.runner.call
        target = ranking.RANK_TARGETS.get(s.label_source, "paraphrase")
        systems_part = self.part(["source", "system", "paraphrase"], coded_corpus=False)
        accuracy = run(
            meta.system_accuracy,
            systems_part,
            self.metrics,
            self.directions_of(),
            n_resamples=s.n_bootstrap,
            seed=s.seed,
        )
        clusters, tests, notes = run(
            meta.metric_significance,
            self.part(list(dict.fromkeys(["corpus", "source", "paraphrase", target]))), self.metrics,
            self.directions_of(),
            label_source=s.label_source, setting=s.significance, seed=s.seed, systems=systems_part, **self.sorted,
        )  # fmt: skip
        within, within_notes = run(
            meta.within_source,
            self.part(["corpus", "source", target]), self.metrics, self.directions_of(), s.label_source,
        )  # fmt: skip
        votes = judge_votes(self.judgments)
        ceiling, ceiling_notes = run(
            meta.human_ceiling, self.part(["pair_id", "corpus"], coded_corpus=False), votes, self.metrics,
            self.directions_of(),
        )  # fmt: skip
        result = {
            "system_accuracy": accuracy,
            "metric_clusters": clusters,
            "metric_tests": tests,
            "within_source": within,
            "human_ceiling": ceiling,
            "judge_competence": run(judge_competence, votes, s.label_source, s.seed),
        }
        return result, {"meta": notes + within_notes + ceiling_notes}

    def _calibration(self, _verdicts):
        """The metrics as probabilities (`meta.calibration`): a group of its own, as long as the rest of the
        meta-evaluation, so that two processes compute them at once."""
        s = self.settings
        calibration, reliability, notes = self.runner.call(
            meta.calibration,
            self.part(["corpus", "paraphrase"]), self.metrics, self.directions_of(),
            n_bootstrap=s.n_bootstrap, seed=s.seed,
        )  # fmt: skip
        return {"calibration": calibration, "reliability": reliability}, {"calibration": notes}

    def _rankings(self, _verdicts):
        """One step for every metric: each corpus's labels are ranked once and shared by all metrics."""
        label_source = self.settings.label_source
        rank_correlation, rank_notes = self.runner.call(
            ranking.rank_correlations,
            self.part(["corpus", ranking.RANK_TARGETS[label_source]]), self.metrics, self.directions_of(), label_source,
            **self.sorted,
        )  # fmt: skip
        return {"rank_correlation": rank_correlation}, {"rank_correlation": rank_notes}

    def _judges(self, _verdicts):
        """What reads the judges' answers: their labels, agreement, English levels, and Table 2's ties."""
        pair_columns = [c for c in self.frame.columns if c not in self.metrics]
        corpus_of_judged = judged_corpus(self.part(["pair_id", "corpus"], [], coded_corpus=False), self.judgments)
        agreement_frame, cohen, agreement_notes = self.runner.call(
            judges_agreement, corpus_of_judged, self.judgments, min_shared=self.settings.min_shared
        )
        by_group, group_notes = self.runner.call(
            by_group_and_level,
            self.part(["corpus", "paraphrase", "generator", "template"], coded_corpus=False),
            self.metrics, self.directions_of(), self.judgments, self.frame[[*pair_columns, *self.metrics]],
        )  # fmt: skip
        result = {
            "table2": self.runner.call(tables.table2, self.part(["corpus", "paraphrase", "is_tie"], [])),
            "labels": answer_distribution(self.judgments, corpus_of_judged, corpora(self.frame)),
            "agreement": agreement_frame,
            "cohen": cohen,
            "by_english_level": breakdowns.by_english_level(self.judgments, self.frame),
            "by_group": by_group,
        }
        return result, {"agreement": agreement_notes, "by_group": group_notes}


def judged_corpus(part, judgments) -> pd.Series:
    """Each judged pair's corpus by pair id, read from `part` (pair_id, corpus): its judged pairs only, since
    indexing 400,000 pair ids for a thousand judged ones took most of the steps that read it."""
    judged = part[part["pair_id"].isin(judgments["pair_id"].astype(str).unique())]
    return judged.set_index("pair_id")["corpus"]


def judges_agreement(corpus_of_judged, judgments, min_shared):
    """The judges' agreement per corpus (`agreement.agreement_table`), each judged pair's corpus from
    `corpus_of_judged` (`judged_corpus`)."""
    return agreement.agreement_table(judgments, corpus_of_judged, min_shared=min_shared)


def by_group_and_level(part, metrics, directions, judgments, frame):
    """By generator and template, then by the judges' English level (reading the judgments and every pair column)."""
    by_group, notes = breakdowns.by_group(part, metrics, directions)
    judged = breakdowns.judged_rows(frame, judgments["pair_id"].astype(str))  # rows first: 400,000 are not copied
    by_level = breakdowns.by_english_level_metrics(judged, judgments, metrics, directions)
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
    labelled = int(frame["paraphrase"].notna().sum())
    if labelled > settings.figure_points:
        notes.append(f"Figure 2 draws a random sample of {settings.figure_points:,} labelled pairs.")
    # Global holds every corpus's labelled pairs: a corpus over the limit puts Global over it too.
    if labelled > ranking.BOOTSTRAP_MAX_PAIRS:
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
