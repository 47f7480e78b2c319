import itertools

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.tasktypes.similarity.scale import ANSWERS, ORDINAL_OF_ANSWER, PARAPHRASE_OF_ANSWER, VOTE
from annotation.votes import with_votes
from reports.analysis.agreement import agreement_table, cohen_pairs, fleiss_kappa


def random_judgments(n_pairs=40, n_judges=6, per_pair=3, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for pair in range(n_pairs):
        truth = rng.random() < 0.5
        for judge in rng.choice(n_judges, size=per_pair, replace=False):
            answer = rng.choice([2, 3] if truth else [0, 1]) if rng.random() < 0.8 else rng.integers(0, 5)
            rows.append((f"p{pair}", f"judge-{judge:05d}", "good", ANSWERS[answer]))
    return with_votes(pd.DataFrame(rows, columns=["pair_id", "judge", "english_level", "answer"]), VOTE)


def test_fleiss_kappa_of_the_textbook_example():
    # Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories, kappa = 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(counts) == pytest.approx(0.20993, abs=1e-4)


def test_alpha_and_fleiss_kappa_match_independent_computations():
    judgments = random_judgments()
    corpus_of_pair = pd.Series("C", index=judgments["pair_id"].unique())
    table, _, _ = agreement_table(judgments, corpus_of_pair)
    values = table[table["corpus"] == "Global"].set_index("statistic")["value"]
    # Krippendorff from the judges x pairs reliability matrix.
    ordinal = judgments.assign(value=judgments["answer"].map(ORDINAL_OF_ANSWER).astype(float))
    matrix = ordinal.pivot(index="judge", columns="pair_id", values="value").to_numpy(dtype=float)
    expected_alpha = krippendorff.alpha(
        reliability_data=matrix, value_domain=[1, 2, 3, 4], level_of_measurement="ordinal"
    )
    assert values["krippendorff_alpha_ordinal"] == pytest.approx(expected_alpha)
    # Fleiss from the per-pair binary counts, computed here from its definition.
    votes = judgments.assign(vote=judgments["answer"].map(PARAPHRASE_OF_ANSWER)).dropna(subset=["vote"])
    counts = pd.crosstab(votes["pair_id"], votes["vote"]).to_numpy(dtype=float)
    counts = counts[counts.sum(axis=1) >= 2]
    n = counts.sum(axis=1)
    p_bar = np.mean([(row @ row - k) / (k * (k - 1)) for row, k in zip(counts, n)])
    p_e = ((counts.sum(axis=0) / n.sum()) ** 2).sum()
    assert values["fleiss_kappa_binary"] == pytest.approx((p_bar - p_e) / (1 - p_e))


def test_pairwise_cohen_kappa_matches_sklearn_and_needs_enough_shared_pairs():
    judgments = random_judgments(n_pairs=60, n_judges=5)
    table = cohen_pairs(judgments, min_shared=5).set_index(["judge_a", "judge_b"])
    votes = judgments.assign(vote=judgments["answer"].map(PARAPHRASE_OF_ANSWER)).dropna(subset=["vote"])
    by_judge = {judge: part.set_index("pair_id")["vote"] for judge, part in votes.groupby("judge")}
    checked = 0
    for a, b in itertools.combinations(sorted(by_judge), 2):
        shared = by_judge[a].index.intersection(by_judge[b].index)
        if len(shared) < 5:
            assert (a, b) not in table.index
            continue
        expected = cohen_kappa_score(by_judge[a][shared].astype(int), by_judge[b][shared].astype(int))
        assert table.loc[(a, b), "kappa"] == pytest.approx(expected)
        assert table.loc[(a, b), "n_shared"] == len(shared)
        checked += 1
    assert checked >= 3


def test_fewer_than_two_judges_gives_a_note_not_an_error():
    judgments = with_votes(
        pd.DataFrame(
            [("p1", "judge-00001", "good", "same_meaning")], columns=["pair_id", "judge", "english_level", "answer"]
        ),
        VOTE,
    )
    table, cohen, notes = agreement_table(judgments, pd.Series({"p1": "C"}))
    assert table["value"].isna().all() and cohen.empty
    assert notes[0] == "Fewer than two judges: inter-annotator agreement is undefined."
