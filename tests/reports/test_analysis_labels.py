import pandas as pd
import pytest

from annotation.models import Answer
from annotation.tasktypes.similarity.scale import ORDINAL_OF_ANSWER, PARAPHRASE_OF_ANSWER, VOTE
from annotation.votes import with_votes
from reports.analysis.labels import (
    ANSWERS,
    answer_distribution,
    attach_labels,
    human_labels,
)
from reports.analysis.tables import table2


def judgments_of(rows):
    return with_votes(pd.DataFrame(rows, columns=["pair_id", "judge", "english_level", "answer"]), VOTE)


def pairs_of(ids, corpus="C", gold=None):
    return pd.DataFrame(
        {
            "pair_id": ids,
            "corpus": corpus,
            "source": "a",
            "hypothesis": "b",
            "gold_label": pd.array(gold if gold is not None else [None] * len(ids), dtype="Int64"),
        }
    )


def test_it_shows_the_answers_in_the_scale_order():
    assert ANSWERS == list(Answer.values)
    assert PARAPHRASE_OF_ANSWER[Answer.MOSTLY_SIMILAR] == 1 and ORDINAL_OF_ANSWER[Answer.DONT_KNOW] is None


def test_it_takes_the_binary_majority_and_leaves_ties_and_dont_know_out():
    judgments = judgments_of(
        [
            ("a", "j1", "good", "same_meaning"),
            ("a", "j2", "good", "very_different"),
            ("a", "j3", "good", "mostly_similar"),  # 2 vs 1: paraphrase
            ("b", "j1", "good", "slightly_similar"),
            ("b", "j2", "good", "mostly_similar"),  # 1 vs 1: tie
            ("c", "j1", "good", "dont_know"),
            ("c", "j2", "good", "very_different"),  # Don't know casts no vote: non-paraphrase
            ("d", "j1", "good", "dont_know"),  # no vote at all
        ]
    )
    labels = human_labels(judgments)
    assert labels["human_label"].tolist() == [1, pd.NA, 0, pd.NA]
    assert labels["is_tie"].tolist() == [True if pid == "b" else False for pid in "abcd"]
    assert labels.loc["a", "mean_ordinal"] == pytest.approx((4 + 1 + 3) / 3)
    assert labels.loc["c", "mean_ordinal"] == 1.0


def test_it_counts_ties_in_a_note_and_excludes_them():
    judgments = judgments_of([("a", "j1", "", "same_meaning"), ("a", "j2", "", "very_different")])
    frame, notes = attach_labels(pairs_of(["a", "b"]), judgments, "human")
    assert frame["paraphrase"].isna().all()
    assert frame["is_tie"].tolist() == [True, False]
    assert any("1 pair(s) have as many paraphrase as non-paraphrase votes" in note for note in notes)
    assert table2(frame).loc[0, "n_ties"] == 1


def test_it_uses_the_gold_label_when_asked():
    frame, notes = attach_labels(pairs_of(["a", "b", "c"], gold=[1, 0, None]), judgments_of([]), "gold")
    assert frame["paraphrase"].tolist() == [1, 0, pd.NA]
    assert any("1 pair(s) have no gold label" in note for note in notes)


def test_it_rejects_an_unknown_label_source():
    with pytest.raises(ValueError, match="label_source"):
        attach_labels(pairs_of(["a"]), judgments_of([]), "majority")


def test_table2_counts_and_shares_per_corpus_and_global():
    frame = pd.concat([pairs_of(["a", "b", "c"], "X", [1, 1, 0]), pairs_of(["d", "e"], "Y", [0, None])])
    frame, _ = attach_labels(frame, judgments_of([]), "gold")
    table = table2(frame).set_index("corpus")
    assert table.loc["X", ["size", "n_paraphrase", "n_non_paraphrase"]].tolist() == [3, 2, 1]
    assert table.loc["X", "share_paraphrase"] == pytest.approx(2 / 3)
    assert table.loc["Y", ["size", "n_labelled", "n_unlabelled", "share_non_paraphrase"]].tolist() == [2, 1, 1, 1.0]
    assert table.loc["Global", ["size", "n_paraphrase", "n_non_paraphrase"]].tolist() == [5, 2, 2]


def test_the_answer_distribution_counts_the_five_answers_per_corpus():
    judgments = judgments_of(
        [("a", "j1", "", "same_meaning"), ("a", "j2", "", "dont_know"), ("b", "j1", "", "same_meaning")]
    )
    corpus_of_pair = pd.Series({"a": "X", "b": "Y"})
    table = answer_distribution(judgments, corpus_of_pair).set_index(["corpus", "answer"])
    assert table.loc[("X", "same_meaning"), "n"] == 1 and table.loc[("X", "dont_know"), "share"] == 0.5
    assert table.loc[("Global", "same_meaning"), "n"] == 2 and table.loc[("Y", "very_different"), "n"] == 0
    assert len(table) == 3 * 5
