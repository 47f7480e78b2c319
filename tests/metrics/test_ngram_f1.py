import pytest

from metrics.ngram_f1 import NgramF1, bag_f1, ngram_bag


@pytest.mark.parametrize(
    ("source", "hypothesis", "expected"),
    [
        # Identical sentences share every n-gram.
        ("the cat sat", "the cat sat", 1.0),
        # No word in common.
        ("the cat sat", "a dog ran", 0.0),
        # "the cat sat" (3+2+1 = 6 n-grams) vs "the cat ran" (6): shared "the", "cat", "the cat" = 3;
        # precision = recall = 3/6, F1 = 0.5.
        ("the cat sat", "the cat ran", 0.5),
        # Case and punctuation: "The cat sat." → the, cat, sat, . (4+3+2+1 = 10 n-grams);
        # "the cat" → 3 n-grams, all shared: precision 3/3, recall 3/10, F1 = 2*0.3/1.3.
        ("The cat sat.", "the cat", 2 * 1.0 * 0.3 / 1.3),
        # Repeated words count with their multiplicity: "a a" (a, a, a a) vs "a" (a): shared 1;
        # precision 1/1, recall 1/3, F1 = 0.5.
        ("a a", "a", 0.5),
    ],
)
def test_it_scores_hand_checked_pairs(source, hypothesis, expected):
    assert NgramF1().score(sources=[source], hypotheses=[hypothesis]) == [pytest.approx(expected)]


def test_it_counts_ngrams_up_to_four_words():
    bag = ngram_bag(["a", "b", "c", "d", "e"])
    assert sum(bag.values()) == 5 + 4 + 3 + 2
    assert ("a", "b", "c", "d") in bag and ("a", "b", "c", "d", "e") not in bag


def test_it_is_symmetric_and_handles_empty_sentences():
    left, right = ngram_bag(["x", "y", "z"]), ngram_bag(["y", "z"])
    assert bag_f1(left, right) == pytest.approx(bag_f1(right, left))
    assert NgramF1().score(sources=[""], hypotheses=[""]) == [1.0]
    assert NgramF1().score(sources=["word"], hypotheses=[""]) == [0.0]


def test_its_signature_names_the_tokenizer_and_orders():
    signature = NgramF1().signature()
    assert signature["metric"] == "ngram_f1" and signature["order"] == "1-4"
    assert signature["tok"].startswith("treebank-nltk-")


def test_it_stems_with_porter_by_default_as_pem_section_6_1_does():
    # "runs" and "run" share the stem "run": every n-gram matches.
    assert NgramF1().score(sources=["he runs fast"], hypotheses=["he run fast"]) == [1.0]
    # Unstemmed: he, fast (2 of 6 n-grams each side): F1 = 2/6.
    assert NgramF1(stem="none").score(sources=["he runs fast"], hypotheses=["he run fast"]) == [pytest.approx(1 / 3)]


def test_stemmed_and_unstemmed_scores_have_different_signatures():
    stemmed, plain = NgramF1().signature(), NgramF1(stem="none").signature()
    assert stemmed["stem"].startswith("porter-nltk-") and plain["stem"] == "none"
    assert stemmed != plain and stemmed["version"] == "2"


def test_bag_f1_takes_weighted_bags_with_min_weights():
    # PEM 4.3: shared = sum of min-weights; precision over the hypothesis's weight, recall over the source's.
    source, hypothesis = {"a": 1.0, "b": 0.5}, {"a": 0.25, "c": 1.0}
    precision, recall = 0.25 / 1.25, 0.25 / 1.5
    assert bag_f1(source, hypothesis) == pytest.approx(2 * precision * recall / (precision + recall))
