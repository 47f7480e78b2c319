"""Span agreement and degree of paraphrase against hand counts and direct library calls."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from reports.analysis.spans import (
    agreement_summary,
    bio,
    degree,
    degree_correlation,
    degree_distribution,
    judge_agreement,
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
