import pytest
from sacrebleu import sentence_bleu

from metrics.filters import bleu_range_reason, length_reason, pair_bleu, paratag_reason
from metrics.ngram_f1 import NgramF1

SOURCE = "The committee approved the new budget after a long debate on Tuesday."


def test_its_bleu_is_sacrebleus_sentence_bleu_against_the_source():
    hypothesis = "After a lengthy debate, the committee passed the budget on Tuesday."
    assert pair_bleu(SOURCE, hypothesis) == pytest.approx(sentence_bleu(hypothesis, [SOURCE]).score)


def test_it_rejects_copies_and_unrelated_sentences_and_keeps_rewordings():
    assert "copies" in bleu_range_reason(SOURCE, SOURCE, 5, 20)
    assert "share too little" in bleu_range_reason(SOURCE, "Penguins cannot fly but swim well.", 5, 20)
    rewording = "After a lengthy debate, the committee passed the budget on Tuesday."
    assert 5 < pair_bleu(SOURCE, rewording) < 20
    assert bleu_range_reason(SOURCE, rewording, 5, 20) is None
    with pytest.raises(ValueError, match="low <= high"):
        bleu_range_reason(SOURCE, SOURCE, 20, 5)


def test_it_applies_paratags_length_checks():
    assert "fewer than 10 characters" in length_reason(SOURCE, "Yes.")
    assert "2.5 times" in length_reason("One two three four.", "One two three four five six seven eight nine ten.")
    assert length_reason(SOURCE, "After a lengthy debate, the committee passed the budget.") is None


def test_ngram_f1_still_counts_through_the_shared_ngram_counter():
    assert NgramF1().score(sources=["the cat sat"], hypotheses=["the cat ran"]) == [pytest.approx(0.5)]


CAT = "The cat sleeps on the old sofa in the living room."
LONG_REWORDING = (
    "A cat is asleep on the old couch in the lounge, where it spends most afternoons curled up quietly "
    "while the family is out at work and school all day long."
)


def test_paratag_filters_apply_the_lengths_with_the_bleu_range():
    # Inside the BLEU range (5, 20), yet 31 words against 11: section 4.1 drops it for its length.
    assert 5 < pair_bleu(CAT, LONG_REWORDING) < 20
    assert "2.5 times" in paratag_reason(CAT, LONG_REWORDING, 5, 20)
    assert "copies" in paratag_reason(CAT, CAT, 5, 20)  # the BLEU reason comes first
    assert paratag_reason(CAT, "A cat is asleep on the old couch in the lounge.", 5, 20) is None
