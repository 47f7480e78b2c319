"""The report of `criteria` campaigns: PEM's tables (`reports.analysis.criteria`) read from the database."""

import numpy as np
import pandas as pd

from annotation.tasktypes.criteria.scale import CRITERIA, PEM_CONTROLS
from annotation.tasktypes.criteria.tasktype import ratings_frame
from campaigns.models import PEM_CONTROL_CORPUS, Pair, Score
from campaigns.scores import values_under
from metrics.pem import FEATURES
from reports.analysis import criteria, ppi
from reports.analysis.common import computed_apart, scipy_stats
from reports.analysis.present import Table, pem
from reports.cache import data_inputs, report_store
from reports.frames import load_frames
from reports.machinery.digests import report_setting

from .base import ESTIMATES, SYSTEMS, Section, TaskSection

NO_SYSTEM = "(no system)"
# PEM's tables, each declared once; the by-system one is shown in the Systems section.
CRITERIA_TABLES = (
    Table(
        "criteria_by_system",
        "Each criterion by system: mean rating with its 95% interval (PEM)",
        layout=pem.criteria_by_system_layout,
        section="systems",
    ),
    Table(
        "criteria_inter_judge",
        "Inter-judge Pearson correlation, averaged over judge pairs (PEM Table 1)",
        section="criteria",
    ),
    Table("criteria_vs_overall", "Each criterion against Overall (PEM Table 2)", section="criteria"),
    Table(
        "criteria_metrics",
        "Metrics against Overall and Adequacy, sentence and system level",
        layout=pem.criteria_metrics_layout,
        section="criteria",
    ),
    Table("criteria_alpha", "Krippendorff's alpha (interval) per criterion", section="criteria"),
    Table(
        "criteria_system_correlation",
        "Metrics against the systems' mean Overall and Adequacy",
        layout=pem.criteria_system_correlation_layout,
        section="criteria",
    ),
    Table(
        "criteria_pem_fit",
        "PEM's fit: SVR from the metric scores to Overall (PEM's three features; every metric), "
        "Pearson on held-out sources",
        layout=pem.criteria_pem_fit_layout,
        section="criteria",
    ),
    Table(
        "criteria_estimates",
        "Each criterion's mean estimated from the rated pairs with and without the metric (prediction-powered, PPI++)",
        layout=pem.criteria_estimates_layout,
        section="estimates",
    ),
    Table(
        "criteria_pem_judges",
        "PEM on held-out sources against the human mean and each judge (PEM Table 3)",
        section="criteria",
    ),
)


def criteria_tables(campaigns) -> dict[str, pd.DataFrame]:
    """PEM's tables for the real pairs and counted ratings of `campaigns`, computed once per state of the data."""
    store = report_store()
    return store.get_or_set(store.key("criteria", data_inputs(campaigns)), lambda: _criteria_tables(campaigns))


def _criteria_tables(campaigns):
    frames = load_frames(campaigns, values=True)
    judgments = frames.judgments.join(ratings_frame(frames.judgments))
    # PEM 5.2: from Table 2 on, the fixed-score controls join the judges' mean (a setting leaves them out).
    in_reference = report_setting("PARASOL_PEM_CONTROLS_IN_REFERENCE")  # in every key, as `report_setting` is
    controls = pem_controls_frame(campaigns, frames.signatures) if in_reference else None
    return tables_of(frames.pairs, judgments, frames.directions, controls)


def tables_of(pairs, judgments, directions, controls=None) -> dict[str, pd.DataFrame]:
    """PEM's tables from the frames: `pairs` (pair_id, source, system, a column per metric), `judgments` with a
    column per criterion, the metrics' `directions`, PEM's controls (or None). Each table is computed apart."""
    pairs = pairs.assign(system=pairs["system"].replace("", NO_SYSTEM))
    metrics = [m for m in directions if m in pairs and pairs[m].notna().any()]
    for metric in metrics:
        pairs[metric] = pd.to_numeric(pairs[metric], errors="coerce").astype(float)
    features = [f for f in FEATURES if f in metrics]
    whole = len(features) == len(FEATURES)  # PEM's own rows need its three features

    def fits():
        rows = [
            {
                "features": "PEM: " + ", ".join(features),
                **criteria.pem_fit(judgments, pairs, features, controls=controls),
            }
        ]
        rows.append(
            {
                "features": "every metric: " + ", ".join(metrics),
                **criteria.pem_fit(judgments, pairs, metrics, controls=controls),
            }
        )
        return {"criteria_pem_fit": pd.DataFrame(rows if whole else rows[1:])}

    def system_level():
        table = criteria.criteria_system_correlation(judgments, pairs, metrics, directions, controls)
        # A criteria campaign has no binary label: the Systems section correlates with mean Overall instead.
        overall = table[table["criterion"] == "overall"].drop(columns="criterion")
        return {"system_correlation": overall, "criteria_system_correlation": table}

    def pem_judges():
        table = criteria.pem_vs_judges(judgments, pairs, features, controls=controls) if whole else pd.DataFrame()
        return {"criteria_pem_judges": table}

    headings = {table.name: table.heading for table in CRITERIA_TABLES} | {"system_correlation": "System level"}
    # Each table on its own: a degenerate fold that stops one (PEM's fit) leaves the others standing.
    return computed_apart(
        {
            ("system_correlation", "criteria_system_correlation"): system_level,
            "criteria_by_system": lambda: {
                "criteria_by_system": with_intervals(criteria.criteria_by_system(judgments, pairs))
            },
            "criteria_inter_judge": lambda: {"criteria_inter_judge": _inter_judge(judgments, pairs)},
            "criteria_vs_overall": lambda: {
                "criteria_vs_overall": criteria.criteria_vs_overall(judgments, pairs, controls)
            },
            "criteria_metrics": lambda: {
                "criteria_metrics": criteria.metrics_vs_criteria(judgments, pairs, metrics, directions, controls)
            },
            "criteria_alpha": lambda: {"criteria_alpha": criteria.alpha_per_criterion(judgments)},
            "criteria_pem_fit": fits,
            "criteria_estimates": lambda: {"criteria_estimates": _estimates(judgments, pairs, metrics, directions)},
            "criteria_pem_judges": pem_judges,
        },
        headings.get,
    )


def _estimates(judgments, pairs, metrics, directions) -> pd.DataFrame:
    """Each criterion's mean rating over every pair: human-only and prediction-powered (`ppi`)."""
    means = judgments.groupby(judgments["pair_id"].astype(str))[list(CRITERIA)].mean()
    tables = []
    for name in CRITERIA:
        frame = pairs.assign(rating=pairs["pair_id"].astype(str).map(means[name]).astype(float))
        table, _notes = ppi.estimates_table(frame, metrics, directions, estimand=name, target="rating")
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if any(len(t) for t in tables) else tables[0]


def pem_controls_frame(campaigns, signatures) -> pd.DataFrame:
    """PEM's fixed-score control pairs: `pair_id`, `source`, `system`, scores under `signatures`, fixed ratings."""
    controls = Pair.objects.filter(campaign__in=list(campaigns), is_control=True, corpus=PEM_CONTROL_CORPUS)
    rows = list(controls.values_list("pk", "campaign__slug", "external_id", "source", "metadata"))
    several = len(list(campaigns)) > 1
    frame = pd.DataFrame(
        [
            {
                "pk": pk,
                "pair_id": f"{slug}:{external_id}" if several else external_id,
                "source": source,
                "system": metadata.get("system", ""),
                **PEM_CONTROLS.get(metadata.get("control"), {}),
            }
            for pk, slug, external_id, source, metadata in rows
            if isinstance(metadata, dict) and metadata.get("control") in PEM_CONTROLS
        ],
        columns=["pk", "pair_id", "source", "system", *CRITERIA],
    )
    for metric, values in values_under(Score.objects.filter(pair__in=controls), signatures).items():
        scores = dict(values)
        frame[metric] = frame["pk"].map(scores).astype(float)
    return frame.drop(columns="pk")


def with_intervals(table: pd.DataFrame, level=0.95) -> pd.DataFrame:
    """`table` (mean, std, n per row) with the t-interval of each mean: `ci_low`, `ci_high` (NaN below 2 ratings)."""
    n = table["n"].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = scipy_stats().t.ppf(0.5 + level / 2, n - 1) * table["std"].astype(float) / np.sqrt(n)
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


def _no_ratings(report):
    ratings = report.tables.get("criteria_by_system")
    if ratings is None or ratings.empty:
        return "No ratings yet: PEM's tables appear once judges have rated pairs on the criteria."
    return None


CRITERIA_REPORT = TaskSection(
    sections=(
        # The by-system table is shown in the Systems section.
        Section(
            "criteria",
            "PEM's criteria: judges and metrics",
            tuple(table.name for table in CRITERIA_TABLES if table.section == "criteria"),
            _no_ratings,
        ),
        # Criteria campaigns have no paraphrase label: their systems are compared on the criteria.
        SYSTEMS.with_tables("criteria_by_system", "systems"),
        ESTIMATES.with_tables("estimates", "criteria_estimates"),
    ),
    declared=CRITERIA_TABLES,
    tables=criteria_tables,
)
