"""The kind of figure issue 14 quotes for METEOR (means per class, best threshold, EER), on a fixture written here.

MRPC is not on this machine, and a test tuned to reproduce 0.696 / 0.559 on one corpus
would prove nothing. Instead, six short pairs whose METEOR values are worked out by hand
(fmean = P·R / (0.9·P + 0.1·R), penalty = 0.5·(chunks / matches)³) go through the metric
and the report, and every figure is checked against the hand values. The pairs end in
punctuation, so they also show why Treebank tokens raise METEOR over a whitespace split
(here the class means go from 0.44 / 0.46 to 0.65 / 0.48, issue 14's MRPC correction
being 0.628 / 0.484 -> 0.696 / 0.559).
"""

import numpy as np
import pandas as pd
import pytest

from annotation.tasktypes.similarity.scale import VOTE
from annotation.votes import with_votes
from metrics import get_metric
from metrics.wordnet import install_wordnet
from reports.analysis import build_report

# source, hypothesis, label, METEOR with Treebank tokens (by hand), with whitespace tokens (by hand)
FIXTURE = [
    # 5 tokens, all matched, 1 chunk | 4 tokens, 1 chunk.
    ("The cat is alive.", "The cat is alive.", 1, 1 - 0.5 * (1 / 5) ** 3, 1 - 0.5 * (1 / 4) ** 3),
    # 7 of 8 hypothesis tokens match (not ","), 6 chunks | "mat," "sat." unmatched: 4 of 6, 4 chunks.
    ("The cat sat on the mat.", "On the mat, the cat sat.", 1, 0.875 / 0.8875 * (1 - 0.5 * (6 / 7) ** 3), 1 / 3),
    # hello , world ! vs hello world: P 1, R 1/2, 2 chunks | "Hello," never meets "Hello".
    ("Hello, world!", "Hello world", 1, 0.5 / 0.95 * 0.5, 0.0),
    # nltk's docstring pair: nothing matches either way.
    ("this is a cat", "non matching hypothesis", 0, 0.0, 0.0),
    # he is . match (3 of 4), 2 chunks | he is (2 of 3), 1 chunk.
    ("He is happy.", "He is sad.", 0, 0.75 * (1 - 0.5 * (2 / 3) ** 3), 2 / 3 * (1 - 0.5 * (1 / 2) ** 3)),
    # the museum at nine . (5 of 6), 2 chunks | the museum at nine. (4 of 5), 2 chunks.
    ("The museum opens at nine.", "The museum closes at nine.", 0, 5 / 6 * (1 - 0.5 * (2 / 5) ** 3), 0.75),
]
SOURCES, HYPOTHESES, LABELS, TREEBANK, WHITESPACE = (list(column) for column in zip(*FIXTURE))


@pytest.fixture(scope="module")
def nltk_data(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("nltk_data")
    install_wordnet(data_dir)
    return str(data_dir)


@pytest.mark.parametrize(("tokenizer", "expected"), [("treebank", TREEBANK), ("whitespace", WHITESPACE)])
def test_each_pair_scores_its_hand_value(nltk_data, tokenizer, expected):
    meteor = get_metric("meteor", nltk_data=nltk_data, tokenizer=tokenizer)
    assert meteor.score(sources=SOURCES, hypotheses=HYPOTHESES) == pytest.approx(expected, abs=1e-9)


def report_of(nltk_data):
    meteor = get_metric("meteor", nltk_data=nltk_data)
    pairs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(len(FIXTURE))],
            "corpus": "fixture",
            "source": SOURCES,
            "hypothesis": HYPOTHESES,
            "gold_label": pd.array(LABELS, dtype="Int64"),
            "meteor": meteor.score(sources=SOURCES, hypotheses=HYPOTHESES),
        }
    )
    judgments = with_votes(pd.DataFrame(columns=["pair_id", "judge", "english_level", "answer"]), VOTE)
    return build_report(pairs, judgments, {"meteor": "higher"}, label_source="gold", n_bootstrap=10, n_draws=2)


def test_the_report_gives_the_hand_figures(nltk_data):
    report = report_of(nltk_data)
    table1 = report.tables["table1"].set_index(["corpus", "label"])
    hand = np.array(TREEBANK)
    paraphrase, non_paraphrase = hand[:3].mean(), hand[3:].mean()
    assert table1.loc[("fixture", "paraphrase"), "mean"] == pytest.approx(paraphrase)
    assert table1.loc[("fixture", "non_paraphrase"), "mean"] == pytest.approx(non_paraphrase)
    # Sorted: 0.996 P, 0.807 N, 0.675 P, 0.639 N, 0.263 P, 0 N. Calling the top 1, 3 or 5
    # paraphrases each gets 4 of 6 right: a tie over [0.263, 0.996]; the strictest is 0.996.
    row = report.tables["table3"].query("corpus == 'fixture'").iloc[0]
    assert row["accuracy"] == pytest.approx(4 / 6) and row["n_tied"] == 3
    assert (row["threshold"], row["threshold_low"], row["threshold_high"]) == pytest.approx((hand[0], hand[2], hand[0]))
    # At 0.675: one non-paraphrase of three accepted, one paraphrase of three rejected.
    eer = report.tables["eer"].query("corpus == 'fixture'").iloc[0]
    assert eer["eer"] == pytest.approx(1 / 3) and eer["threshold"] == pytest.approx(hand[1])
