"""Span agreement and degree of paraphrase against hand counts and direct library calls."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from reports.analysis.spans import (
    MEAN_OF_PAIRS,
    POOLED,
    agreement_after_test2,
    agreement_summary,
    bio,
    degree,
    degree_correlation,
    degree_distribution,
    filter_test2,
    judge_agreement,
    pair_span_f1,
    pooled_kappa,
)

# Two pairs (p1: 4 + 3 words, p2: 3 + 3 words), three judges.
TAGGINGS = [
    ("p1", "ann", [0, 1, 1, 0], [0, 0, 1]),
    ("p1", "bob", [0, 1, 1, 0], [0, 1, 1]),
    ("p1", "cat", [0, 0, 1, 0], [0, 0, 0]),
    ("p2", "ann", [0, 0, 0], [1, 0, 0]),
    ("p2", "bob", [0, 0, 0], [1, 0, 0]),
]


def taggings():
    return pd.DataFrame(TAGGINGS, columns=["pair_id", "judge", "source_tags", "hypothesis_tags"])


def test_it_turns_runs_of_tagged_words_into_spans():
    assert bio([0, 1, 1, 0, 1]) == ["O", "B-GAP", "I-GAP", "O", "B-GAP"]


def test_its_kappa_is_scikit_learns_over_the_concatenated_tags():
    table = judge_agreement(taggings()).set_index(["judge_a", "judge_b"])
    ann = [0, 1, 1, 0] + [0, 0, 1] + [0, 0, 0] + [1, 0, 0]
    bob = [0, 1, 1, 0] + [0, 1, 1] + [0, 0, 0] + [1, 0, 0]
    assert table.loc[("ann", "bob"), "kappa"] == pytest.approx(cohen_kappa_score(ann, bob))
    assert table.loc[("ann", "bob"), "n_pairs"] == 2 and table.loc[("ann", "bob"), "n_words"] == 13


def test_its_span_f1_counts_exact_span_matches():
    table = judge_agreement(taggings()).set_index(["judge_a", "judge_b"])
    # ann's spans: p1 source [1,2], p1 hypothesis [2], p2 hypothesis [0] -> 3 spans.
    # bob's spans: p1 source [1,2], p1 hypothesis [1,2], p2 hypothesis [0] -> 3 spans; 2 match exactly.
    precision = recall = 2 / 3
    assert table.loc[("ann", "bob"), "span_f1"] == pytest.approx(2 * precision * recall / (precision + recall))
    assert table.loc[("ann", "bob"), "word_accuracy"] == pytest.approx(12 / 13)
    # ann vs cat share p1 only: ann has 2 spans there, cat 1 ([2] in the source), no exact match.
    assert table.loc[("ann", "cat"), "span_f1"] == 0.0


def test_it_summarises_weighted_by_shared_words():
    pairwise = judge_agreement(taggings())
    summary = agreement_summary(pairwise).set_index("judge")
    expected = np.average(pairwise["word_accuracy"], weights=pairwise["n_words"])
    assert summary.loc["all", "word_accuracy"] == pytest.approx(expected)
    assert summary.loc["cat", "n_judge_pairs"] == 2


def test_it_takes_the_per_word_majority_for_the_degree():
    degrees = degree(taggings()).set_index("pair_id")
    # p1: majority of 3 judges -> source [0,1,1,0], hypothesis [0,0,1]: 3 of 7 words.
    assert degrees.loc["p1", "source_tags"] == [0, 1, 1, 0]
    assert degrees.loc["p1", "hypothesis_tags"] == [0, 0, 1]
    assert degrees.loc["p1", "tagged_share"] == pytest.approx(3 / 7)
    # p2: two judges agree on one word of six.
    assert degrees.loc["p2", "tagged_share"] == pytest.approx(1 / 6)
    assert degrees.loc["p2", "source_share"] == 0.0 and degrees.loc["p2", "has_span"]


def test_it_correlates_the_degree_with_metrics_like_scipy():
    rows = []
    for index in range(6):
        tags = [1] * index + [0] * (6 - index)
        rows.append((f"q{index}", "ann", tags, [0, 0]))
    degrees = degree(pd.DataFrame(rows, columns=["pair_id", "judge", "source_tags", "hypothesis_tags"]))
    similarity = [0.9, 0.8, 0.85, 0.5, 0.4, 0.1]
    pairs = pd.DataFrame(
        {"pair_id": [f"q{i}" for i in range(6)], "corpus": ["a", "a", "a", "b", "b", "b"], "sim": similarity}
    )
    table = degree_correlation(degrees, pairs, ["sim"], {"sim": "higher"}).set_index("against")
    share = [index / 8 for index in range(6)]
    assert table.loc["sim", "spearman"] == pytest.approx(stats.spearmanr(share, similarity)[0])
    assert table.loc["sim", "kendall"] == pytest.approx(stats.kendalltau(share, similarity)[0])
    distribution = degree_distribution(degrees, pairs, "corpus").set_index("corpus")
    assert distribution.loc["a", "mean_tagged_share"] == pytest.approx(np.mean(share[:3]))
    assert distribution.loc["all", "share_with_span"] == pytest.approx(5 / 6)


def test_with_three_judges_the_pooled_kappa_sits_beside_the_mean_of_pairwise_kappas():
    # Every two judges' shared words concatenated (ann-bob 13, ann-cat 7, bob-cat 7 = 27 comparisons), counted by
    # hand: both tagged 6, first only 5, second only 1, neither 15. p_o = 21/27, p_e = (11*7 + 16*20) / 27**2.
    kappa, n_words = pooled_kappa(taggings())
    assert n_words == 27
    assert kappa == pytest.approx(85 / 166)
    summary = agreement_summary(judge_agreement(taggings()), taggings()).set_index("judge")
    assert summary.loc["all (pooled)", "kappa"] == pytest.approx(85 / 166)
    assert summary.loc["all (pooled)", "kappa_is"] == POOLED
    assert summary.loc["all", "kappa_is"] == MEAN_OF_PAIRS
    assert summary.loc["all", "kappa"] != pytest.approx(85 / 166)


def test_with_two_judges_there_is_no_pooled_row():
    two = taggings()[taggings()["judge"] != "cat"]
    assert "all (pooled)" not in set(agreement_summary(judge_agreement(two), two)["judge"])


def test_test2_drops_pairs_where_two_taggings_reach_a_span_f1_below_0_4():
    # p1: ann-bob F1 = 0.5 (the source span matches, the hypothesis spans do not), ann-cat F1 = 0: dropped.
    # p2: ann and bob tag the same word: F1 = 1, kept.
    kept, counts = filter_test2(taggings())
    assert counts == {"min_span_f1": 0.4, "n_pairs": 2, "n_tested": 2, "n_discarded": 1, "n_kept": 1}
    assert set(kept["pair_id"]) == {"p2"}
    assert filter_test2(taggings(), min_f1=0.0)[1]["n_discarded"] == 0
    row = agreement_after_test2(taggings()).iloc[0]
    assert (row["n_kept"], row["n_words"], row["kappa"], row["span_f1"]) == (1, 6, 1.0, 1.0)
    one_judge = taggings()[taggings()["judge"] == "ann"]
    assert agreement_after_test2(one_judge).empty  # nothing to compare: no Test2 row


def test_two_empty_taggings_agree_for_test2():
    empty = pd.Series({"source_tags": [0, 0], "hypothesis_tags": [0, 0, 0]})
    assert pair_span_f1(empty, empty) == 1.0


def test_the_degree_of_paraphrase_subset_keeps_pairs_within_theta():
    # tagged_share: p1 3/7, p2 1/6; ParaTag's theta = 0.05 keeps neither, theta = 0.2 keeps p2.
    assert not degree(taggings())["within_theta"].any()
    degrees = degree(taggings(), theta=0.2).set_index("pair_id")
    assert degrees["within_theta"].to_dict() == {"p1": False, "p2": True}
    pairs = pd.DataFrame({"pair_id": ["p1", "p2"], "corpus": ["a", "a"]})
    distribution = degree_distribution(degrees.reset_index(), pairs, "corpus").set_index("corpus")
    assert distribution.loc["all", "n_within_theta"] == 1
