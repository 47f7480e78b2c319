"""The oracle tables (paper's tables 2 and 3 shapes) against counts worked out by hand."""

import pandas as pd
import pytest

from reports.analysis.oracle import ORACLE_COLUMNS, oracle_table, verdicts_frame


def checked(verdict, consistency, accepted, phi=None, no=None):
    details = {"answers": [], "verdict": verdict, "consistency": consistency, "accepted": accepted}
    if phi is not None:
        details["yes_check"] = {"phi_or": phi[0], "phi_and": phi[1]}
    if no is not None:
        details["no_check"] = {"accepted": no}
    return details


PAIRS = pd.DataFrame(
    {
        "pair_id": ["p1", "p2", "p3", "p4", "p5", "p6", "p7"],
        "paraphrase": pd.array([1, 1, 1, 0, 0, None, 0], dtype="Int64"),
    }
)
DETAILS = [
    ("p1", "llm_checked", checked("yes", 1.0, True, phi=(True, False))),
    ("p2", "llm_checked", checked("yes", 0.6, False, phi=(False, False))),
    ("p3", "llm_checked", checked("no", 0.8, True, no=True)),
    ("p4", "llm_checked", checked("no", 1.0, False, no=False)),
    ("p5", "llm_checked", checked("yes", 0.6, True, phi=(True, True))),
    ("p6", "llm_checked", checked("yes", 0.8, False, phi=(False, False))),  # unlabelled
    ("p7", "llm_checked", checked(None, 0.4, False)),  # a tie: no verdict, no checker
    ("p1", "llm_vote", {"answers": ["yes"], "verdict": "yes", "consistency": 1.0}),
    ("p4", "llm_vote", {"answers": ["no"], "verdict": "no", "consistency": 1.0}),
    ("p9", "lev", None),  # a metric without details is skipped
]


@pytest.fixture(scope="module")
def table():
    frame = oracle_table(PAIRS, verdicts_frame(DETAILS))
    assert list(frame.columns) == ORACLE_COLUMNS
    return frame


def pick(table, metric, part, **keys):
    rows = table[(table["metric"] == metric) & (table["part"] == part)]
    for column, value in keys.items():
        rows = rows[rows[column] == value]
    assert len(rows) == 1, rows
    row = rows.iloc[0]
    return row["count"], row["n"]


@pytest.mark.parametrize(
    ("label", "verdict", "expected"),
    [
        ("paraphrase", "yes", (2, 3)),
        ("paraphrase", "no", (1, 3)),
        ("paraphrase", "none", (0, 3)),
        ("non_paraphrase", "yes", (1, 3)),
        ("non_paraphrase", "no", (1, 3)),
        ("non_paraphrase", "none", (1, 3)),
    ],
)
def test_table2_shape_counts_verdicts_per_label(table, label, verdict, expected):
    assert pick(table, "llm_checked", "verdict_by_label", label=label, verdict=verdict) == expected


def test_agreement_counts_labelled_pairs_whose_verdict_matches(table):
    assert pick(table, "llm_checked", "agreement") == (3, 6)  # p1, p2, p4
    assert pick(table, "llm_vote", "agreement") == (2, 2)
    share = table[(table["metric"] == "llm_checked") & (table["part"] == "agreement")]["share"].item()
    assert share == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("checker", "label", "expected"),
    [
        ("phi_or", "paraphrase", (1, 2)),
        ("phi_or", "non_paraphrase", (1, 1)),
        ("phi_and", "paraphrase", (0, 2)),
        ("phi_and", "non_paraphrase", (1, 1)),
        ("no_check", "paraphrase", (1, 1)),
        ("no_check", "non_paraphrase", (0, 1)),
        ("accepted", "paraphrase", (2, 3)),
        ("accepted", "non_paraphrase", (1, 2)),  # p7 had no verdict, so nothing to accept
    ],
)
def test_table3_shape_share_accepted_by_label(table, checker, label, expected):
    assert pick(table, "llm_checked", "accepted_by_label", checker=checker, label=label) == expected


def test_acceptance_by_verdict(table):
    assert pick(table, "llm_checked", "accepted_by_verdict", checker="accepted", verdict="yes") == (2, 3)
    assert pick(table, "llm_checked", "accepted_by_verdict", checker="accepted", verdict="no") == (1, 2)


def test_accuracy_of_accepted_and_rejected_verdicts(table):
    assert pick(table, "llm_checked", "accuracy_by_acceptance", group="accepted") == (1, 3)  # p1 right; p3, p5 wrong
    assert pick(table, "llm_checked", "accuracy_by_acceptance", group="rejected") == (2, 2)  # p2, p4


def test_consistency_histogram_counts_every_pair_with_a_vote(table):
    rows = table[(table["metric"] == "llm_checked") & (table["part"] == "consistency")]
    assert dict(zip(rows["group"], rows["count"])) == {"0.40": 1, "0.60": 2, "0.80": 2, "1.00": 2}
    assert set(rows["n"]) == {7}


def test_llm_vote_has_no_checker_rows(table):
    assert set(table.loc[table["metric"] == "llm_vote", "part"]) == {"verdict_by_label", "agreement", "consistency"}


def test_no_oracle_metric_gives_an_empty_table():
    assert oracle_table(PAIRS, verdicts_frame([("p1", "lev", None)])).empty


def checked_all(label_verdict, phi, no=None):
    """A pair of a run with LLM_CHECK_YES_ON=all: the yes-checker's result is there whatever the verdict."""
    details = {"answers": [], "verdict": label_verdict, "consistency": 1.0, "accepted": False}
    details["yes_check"] = {"phi_or": phi[0], "phi_and": phi[1]}
    if no is not None:
        details["no_check"] = {"accepted": no[1], "category": no[0]}
    return details


ALL_PAIRS = pd.DataFrame({"pair_id": ["q1", "q2", "q3", "q4", "q5", "q6"], "paraphrase": [1, 1, 1, 0, 0, 0]})
ALL_DETAILS = [
    ("q1", "llm_checked", checked_all("yes", (True, True))),
    ("q2", "llm_checked", checked_all("no", (True, False), no=("AI", False))),
    ("q3", "llm_checked", checked_all(None, (False, False))),  # no verdict, still proved (or not)
    ("q4", "llm_checked", checked_all("yes", (True, False))),
    ("q5", "llm_checked", checked_all("no", (False, False), no=("~A~I", True))),
    ("q6", "llm_checked", checked_all("no", (False, False), no=("~A~I", False))),
]


@pytest.mark.parametrize(
    ("part", "keys", "expected"),
    [
        # Over every labelled pair of the class, as the paper's percentages are (q3 without a verdict included).
        ("table3_by_label", {"checker": "phi_or", "label": "paraphrase"}, (2, 3)),
        ("table3_by_label", {"checker": "phi_and", "label": "paraphrase"}, (1, 3)),
        ("table3_by_label", {"checker": "phi_or", "label": "non_paraphrase"}, (1, 3)),
        ("table3_by_label", {"checker": "phi_and", "label": "non_paraphrase"}, (0, 3)),
        # Over every oracle yes / no, the no verdicts included, which the scheme itself never proves.
        ("table3_by_verdict", {"checker": "phi_or", "verdict": "yes"}, (2, 2)),
        ("table3_by_verdict", {"checker": "phi_and", "verdict": "yes"}, (1, 2)),
        ("table3_by_verdict", {"checker": "phi_or", "verdict": "no"}, (1, 3)),
        ("table3_by_verdict", {"checker": "phi_and", "verdict": "no"}, (0, 3)),
        ("no_test_by_category", {"group": "AI"}, (0, 1)),
        ("no_test_by_category", {"group": "~A~I"}, (1, 2)),
    ],
)
def test_all_pairs_mode_gives_table3_with_the_papers_denominators(part, keys, expected):
    table = oracle_table(ALL_PAIRS, verdicts_frame(ALL_DETAILS))
    assert pick(table, "llm_checked", part, **keys) == expected


def test_without_the_all_pairs_mode_there_is_no_table3(table):
    assert not table["part"].str.startswith("table3").any()
