import numpy as np
import pandas as pd

from annotation.reliability import judge_reliability
from annotation.tasktypes.similarity.scale import VOTE
from annotation.votes import with_votes


def answers(rows):
    frame = pd.DataFrame(rows, columns=["judge", "pair_pk", "answer", "is_control", "expected", "response_ms"])
    return with_votes(frame, VOTE)


def test_it_computes_control_pass_rate_and_flags_a_careless_judge():
    table = judge_reliability(
        answers(
            [
                (1, 10, "same_meaning", True, 1, 3000),
                (1, 11, "very_different", True, 0, 3000),
                (2, 10, "very_different", True, 1, 3000),
                (2, 11, "same_meaning", True, 0, 3000),
                (2, 12, "mostly_similar", True, 0, 3000),
            ]
        )
    ).set_index("judge")
    assert table.loc[1, "control_pass_rate"] == 1.0 and not table.loc[1, "flagged"]
    assert table.loc[2, "control_pass_rate"] == 0.0 and table.loc[2, "flagged"]
    assert "controls" in table.loc[2, "reasons"]


def test_it_measures_dont_know_rate_speed_and_agreement():
    rows = []
    for pair in range(10):
        rows += [(1, pair, "same_meaning", False, None, 4000), (2, pair, "same_meaning", False, None, 4000)]
        rows.append((3, pair, "very_different" if pair < 8 else "dont_know", False, None, 400))
    table = judge_reliability(answers(rows)).set_index("judge")
    assert table.loc[3, "dont_know_rate"] == 0.2
    assert table.loc[3, "median_response_ms"] == 400
    # Judge 3 disagrees with the majority of the others on each of its 8 binary answers.
    assert table.loc[3, "agreement"] == 0.0 and table.loc[3, "flagged"]
    assert "ms" in table.loc[3, "reasons"] and "agrees" in table.loc[3, "reasons"]
    # Judges 1 and 2: the others (one agreeing, one disagreeing) tie -> not comparable.
    assert np.isnan(table.loc[1, "agreement"])


def test_an_empty_campaign_gives_an_empty_table():
    assert judge_reliability(answers([])).empty
