"""The LLM oracle and its checker against the labels (Zeng, Wang and Ibbetson, section 5.2, tables 2, 3 and 5).

Inputs are plain frames: the labelled pairs (`pair_id`, `paraphrase` 0/1 or empty) and one
row per pair and oracle metric with the verdict the metric stored in its details
(`verdicts_frame` flattens those). The output is one tidy table, written as oracle.csv.
"""

import numpy as np
import pandas as pd

from reports.analysis.labels import CLASS_NAMES

YES, NO = "yes", "no"
NO_VERDICT = "none"  # a tie or no parseable answer
VERDICT_OF_LABEL = {1: YES, 0: NO}
CHECKERS = ("phi_or", "phi_and", "no_check")
YES_CHECKERS = ("phi_or", "phi_and")
VERDICT_COLUMNS = ["pair_id", "metric", "verdict", "consistency", "accepted", *CHECKERS, "no_category"]
ORACLE_COLUMNS = ["metric", "part", "label", "verdict", "checker", "group", "n", "count", "share"]


def verdicts_frame(rows) -> pd.DataFrame:
    """One row per (pair_id, metric, details) of llm_vote / llm_checked: verdict, consistency, checker outcomes.

    `accepted` and the checker columns are empty for a metric without a checker (llm_vote),
    for a pair without a verdict, and for a checker that did not run on that verdict.
    """
    records = []
    for pair_id, metric, details in rows:
        if not isinstance(details, dict) or "verdict" not in details:
            continue
        yes_check, no_check = details.get("yes_check") or {}, details.get("no_check") or {}
        records.append(
            (
                pair_id,
                metric,
                details["verdict"] or NO_VERDICT,
                details.get("consistency"),
                # Without a verdict no checker ran: nothing was accepted or rejected.
                details.get("accepted") if details["verdict"] else None,
                yes_check.get("phi_or"),
                yes_check.get("phi_and"),
                no_check.get("accepted"),
                no_check.get("category"),  # Table 5's A/I category (the paper's no-test only)
            )
        )
    return pd.DataFrame.from_records(records, columns=VERDICT_COLUMNS)


def _row(metric, part, n, count, *, label="all", verdict="all", checker="", group=""):
    return {
        "metric": metric,
        "part": part,
        "label": label,
        "verdict": verdict,
        "checker": checker,
        "group": group,
        "n": int(n),
        "count": int(count),
        "share": count / n if n else np.nan,
    }


def verdicts_by_label(metric, frame) -> list[dict]:
    """Table 2's shape: per label, the share of oracle yes / no / no verdict; then overall agreement."""
    rows = []
    labelled = frame[frame["paraphrase"].notna()]
    for value, name in CLASS_NAMES.items():
        of_label = labelled[labelled["paraphrase"] == value]
        for verdict in (YES, NO, NO_VERDICT):
            count = (of_label["verdict"] == verdict).sum()
            rows.append(_row(metric, "verdict_by_label", len(of_label), count, label=name, verdict=verdict))
    agree = (labelled["verdict"] == labelled["paraphrase"].map(VERDICT_OF_LABEL)).sum()
    rows.append(_row(metric, "agreement", len(labelled), agree))
    return rows


def accepted_by_label(metric, frame) -> list[dict]:
    """Table 3's shape: of the verdicts a checker ran on, the share it accepted, by label and by verdict."""
    rows = []
    labelled = frame[frame["paraphrase"].notna()]
    for checker in (*CHECKERS, "accepted"):
        ran = labelled[labelled[checker].notna()]
        if ran.empty:
            continue
        for value, name in CLASS_NAMES.items():
            of_label = ran[ran["paraphrase"] == value]
            count = of_label[checker].astype(bool).sum()
            rows.append(_row(metric, "accepted_by_label", len(of_label), count, label=name, checker=checker))
        for verdict in (YES, NO):
            of_verdict = ran[ran["verdict"] == verdict]
            count = of_verdict[checker].astype(bool).sum()
            rows.append(_row(metric, "accepted_by_verdict", len(of_verdict), count, verdict=verdict, checker=checker))
    return rows


def table3(metric, frame) -> list[dict]:
    """Table 3 as the paper counts it (section 5.2.2), when the yes-checker ran on every pair (LLM_CHECK_YES_ON=all):
    of all labelled-yes / labelled-no pairs, and of all the oracle's yes / no among them, the share proved."""
    rows = []
    labelled = frame[frame["paraphrase"].notna()]
    for checker in YES_CHECKERS:
        if labelled.empty or labelled[checker].isna().any():
            continue  # proved on yes verdicts only: the paper's denominators cannot be had
        for value, name in CLASS_NAMES.items():
            of_label = labelled[labelled["paraphrase"] == value]
            rows.append(
                _row(
                    metric,
                    "table3_by_label",
                    len(of_label),
                    of_label[checker].astype(bool).sum(),
                    label=name,
                    checker=checker,
                )
            )
        for verdict in (YES, NO):
            of_verdict = labelled[labelled["verdict"] == verdict]
            count = of_verdict[checker].astype(bool).sum()
            rows.append(_row(metric, "table3_by_verdict", len(of_verdict), count, verdict=verdict, checker=checker))
    return rows


def table5(metric, frame) -> list[dict]:
    """Table 5's shape (section 5.2.3): no verdicts per A/I category of the paper's no-test, and the share accepted."""
    tested = frame[frame["no_category"].notna()]
    return [
        _row(
            metric,
            "no_test_by_category",
            len(part),
            part["no_check"].astype(bool).sum(),
            checker="no_check",
            group=group,
        )
        for group, part in tested.groupby("no_category", sort=True)
    ]


def accuracy_by_acceptance(metric, frame) -> list[dict]:
    """Share of verdicts that match the label, among verdicts the checker accepted and among those it rejected."""
    rows = []
    decided = frame[frame["paraphrase"].notna() & frame["verdict"].isin([YES, NO]) & frame["accepted"].notna()]
    right = decided["verdict"] == decided["paraphrase"].map(VERDICT_OF_LABEL)
    for group, mask in (
        ("accepted", decided["accepted"].astype(bool)),
        ("rejected", ~decided["accepted"].astype(bool)),
    ):
        rows.append(_row(metric, "accuracy_by_acceptance", mask.sum(), (right & mask).sum(), group=group))
    return rows


def consistency_histogram(metric, frame) -> list[dict]:
    """How many pairs have each self-consistency value (k answers give at most k distinct values)."""
    values = frame["consistency"].dropna().astype(float).round(4)
    return [
        _row(metric, "consistency", len(values), count, group=f"{value:.2f}")
        for value, count in values.value_counts().sort_index().items()
    ]


def oracle_table(pairs: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """Every oracle figure for each oracle metric, in the tidy long form of ORACLE_COLUMNS.

    `pairs`: pair_id, paraphrase (0/1, empty when unlabelled); `verdicts`: from `verdicts_frame`.
    """
    if verdicts is None or verdicts.empty:
        return pd.DataFrame(columns=ORACLE_COLUMNS)
    frame = verdicts.merge(pairs[["pair_id", "paraphrase"]], on="pair_id", how="inner")
    rows = []
    for metric, of_metric in frame.groupby("metric", sort=False):
        rows += verdicts_by_label(metric, of_metric)
        if of_metric["accepted"].notna().any():
            rows += accepted_by_label(metric, of_metric) + table3(metric, of_metric) + table5(metric, of_metric)
            rows += accuracy_by_acceptance(metric, of_metric)
        rows += consistency_histogram(metric, of_metric)
    return pd.DataFrame(rows, columns=ORACLE_COLUMNS)
