"""How far each judge can be trusted: controls, Don't know rate, speed, agreement (on the type's votes).

`judge_reliability` is a pure function over a DataFrame of answers, so it is
testable alone; `campaign_reliability` loads that frame for one campaign.
"""

import pandas as pd

from campaigns.task_types import task_type_of

from .models import Judge, Judgment
from .votes import ANSWER_COLUMN, with_votes

# A judge is flagged when one of these holds (with enough answers to tell).
MIN_CONTROL_PASS_RATE, MIN_CONTROLS = 0.75, 2
MAX_DONT_KNOW_RATE, MIN_ANSWERS = 0.3, 10
MIN_MEDIAN_RESPONSE_MS = 1000
MIN_AGREEMENT, MIN_COMPARABLE = 0.5, 5

COLUMNS = [
    "judge",
    "n_answers",
    "n_controls",
    "control_pass_rate",
    "dont_know_rate",
    "median_response_ms",
    "agreement",
    "flagged",
    "reasons",
]


def _agreement_with_others(answers):
    """Per judge: share of binary answers equal to the majority of the other judges on the same pair."""
    binary = answers.dropna(subset=["paraphrase"])
    totals = binary.groupby("pair_pk")["paraphrase"].agg(["sum", "count"])
    merged = binary.join(totals, on="pair_pk")
    others_yes = merged["sum"] - merged["paraphrase"]
    others_n = merged["count"] - 1
    comparable = (others_n > 0) & (2 * others_yes != others_n)
    others_majority = (2 * others_yes > others_n).astype(int)
    merged = merged.assign(comparable=comparable, agrees=comparable & (others_majority == merged["paraphrase"]))
    grouped = merged.groupby("judge")[["comparable", "agrees"]].sum()
    return grouped["agrees"] / grouped["comparable"].where(grouped["comparable"] >= MIN_COMPARABLE)


def _reasons(row):
    reasons = []
    if row.n_controls >= MIN_CONTROLS and row.control_pass_rate < MIN_CONTROL_PASS_RATE:
        reasons.append(f"passed {row.control_pass_rate:.0%} of controls")
    if row.n_answers >= MIN_ANSWERS and row.dont_know_rate > MAX_DONT_KNOW_RATE:
        reasons.append(f"Don't know on {row.dont_know_rate:.0%}")
    if row.n_answers >= MIN_ANSWERS and row.median_response_ms < MIN_MEDIAN_RESPONSE_MS:
        reasons.append(f"median answer in {row.median_response_ms:.0f} ms")
    if pd.notna(row.agreement) and row.agreement < MIN_AGREEMENT:
        reasons.append(f"agrees with others on {row.agreement:.0%}")
    return "; ".join(reasons)


def judge_reliability(answers):
    """One row per judge from answers with columns judge, pair_pk, is_control, expected, response_ms and the
    vote columns (`annotation.votes.with_votes`: `vote`, `abstained`, as the task type declares them).

    An optional `passed` column says whether each control was passed (the task type's rule);
    without it, a control is passed when the vote equals `expected`.
    """
    if answers.empty:
        return pd.DataFrame(columns=COLUMNS)
    answers = answers.assign(paraphrase=answers["vote"])
    controls = answers[answers["is_control"]]
    real = answers[~answers["is_control"]]
    by_judge = answers.groupby("judge")
    table = pd.DataFrame(
        {
            "n_answers": by_judge.size(),
            "dont_know_rate": by_judge["abstained"].mean(),
            "median_response_ms": by_judge["response_ms"].median(),
            "n_controls": controls.groupby("judge").size(),
            "control_pass_rate": _control_results(controls).groupby(controls["judge"]).mean(),
            "agreement": _agreement_with_others(real),
        }
    )
    table["n_controls"] = table["n_controls"].fillna(0).astype(int)
    table["reasons"] = [_reasons(row) for row in table.itertuples()]
    table["flagged"] = table["reasons"] != ""
    return table.reset_index(names="judge")[COLUMNS]


def _control_results(controls):
    if "passed" in controls:
        return controls["passed"].astype(bool)
    return controls["paraphrase"] == controls["expected"]


def campaign_reliability(campaign):
    """The reliability table of a campaign's judges (training answers left out), with their Judge objects."""
    rows = Judgment.objects.filter(judge__campaign=campaign, is_training=False).values_list(
        "judge_id", "pair_id", "pair__is_control", "pair__gold_label", "response_ms", "values"
    )
    answers = pd.DataFrame(
        list(rows), columns=["judge", "pair_pk", "is_control", "expected", "response_ms", "values"]
    ).astype({"is_control": bool})
    # Whether each control was passed is the task type's rule (PEM's criteria check the ratings).
    task_type = task_type_of(campaign)
    answers["passed"] = [
        bool(control) and task_type.control_passed(values, expected)
        for control, values, expected in zip(answers["is_control"], answers["values"], answers["expected"])
    ]
    vote = task_type.vote
    answers[ANSWER_COLUMN] = vote.answers(answers["values"]) if vote is not None else None
    answers = with_votes(answers, vote).drop(columns=[ANSWER_COLUMN, "values"])
    table = judge_reliability(answers)
    judges = Judge.objects.in_bulk(list(table["judge"]))
    table["judge"] = table["judge"].map(judges)
    # A crowd participant id is no secret, so a repeat joins as a new judge (resuming on it would hand out the
    # first judge's answers; refusing would tell anyone which ids joined): the table says how often it joined.
    ids = (
        Judge.objects.filter(campaign=campaign)
        .exclude(crowd_participant="")
        .values_list("crowd_participant", flat=True)
    )
    joins = pd.Series(list(ids), dtype=object).value_counts()
    table["crowd_joins"] = [joins.get(judge.crowd_participant, 0) if judge else 0 for judge in table["judge"]]
    return table
