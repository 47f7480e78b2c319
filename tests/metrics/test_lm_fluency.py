"""lm_fluency with the embedded SmolLM2: PEM's normalisation, batching that changes nothing, a sanity order."""

import pytest
import torch

from metrics.lm_fluency import LmFluency, word_count


@pytest.fixture(scope="module")
def metric():
    return LmFluency(device="cpu", dtype="float32", batch_size=4)


def reference(metric, text, length):
    """Sum of next-token log-probabilities of `text` and the end token after the start token, one sequence."""
    tokens = [*metric.tokenizer.encode(text, add_special_tokens=False), metric.end_id]
    ids = torch.tensor([[metric.start_id, *tokens]])
    with torch.inference_mode():
        logits = metric.model(input_ids=ids).logits.float()[0]
    log_probs = torch.log_softmax(logits[:-1], dim=-1)
    return sum(log_probs[position, token].item() for position, token in enumerate(tokens)) / length


def test_it_divides_the_sentence_log_probability_by_its_words(metric):
    text = "The committee approved the new budget on Tuesday."
    [score] = metric.score(sources=["ignored"], hypotheses=[text])
    # 8 words: the full stop is no word; log Pr(S) includes Pr(end | sentence).
    assert score == pytest.approx(reference(metric, text, length=8), abs=1e-4)


def test_it_counts_words_not_punctuation_marks():
    assert word_count("Well, it works -- doesn't it?") == 5  # Well it works doesn't it
    assert word_count("...") == 1 and word_count("") == 1


def test_the_end_token_counts_a_sentence_cut_short_against_it(metric):
    # The end term is part of log Pr(S): removing it changes the score (and is what lets an LM
    # tell "The cat sat on the" from a whole sentence).
    text = "The cat sat on the"
    [score] = metric.score(sources=[""], hypotheses=[text])
    tokens = metric.tokenizer.encode(text, add_special_tokens=False)
    ids = torch.tensor([[metric.start_id, *tokens, metric.end_id]])
    with torch.inference_mode():
        log_probs = torch.log_softmax(metric.model(input_ids=ids).logits.float()[0, :-1], dim=-1)
    end_term = log_probs[len(tokens), metric.end_id].item()
    assert end_term < 0
    assert score == pytest.approx(reference(metric, text, length=5), abs=1e-4)
    assert score * 5 - end_term == pytest.approx(sum(log_probs[i, t].item() for i, t in enumerate(tokens)), abs=1e-3)


def test_padding_in_a_batch_changes_no_score(metric):
    texts = ["Short one.", "A somewhat longer sentence that needs padding partners.", "Mid length here.", "Yes."]
    batched = metric.score(sources=[""] * 4, hypotheses=texts)
    alone = [metric.score(sources=[""], hypotheses=[text])[0] for text in texts]
    assert batched == pytest.approx(alone, abs=1e-4)


def test_it_prefers_a_sentence_to_its_words_shuffled(metric):
    fluent, shuffled = metric.score(
        sources=["", ""],
        hypotheses=["She opened the window to let the fresh air in.", "window air the in She let fresh opened to the."],
    )
    assert fluent > shuffled


def test_it_scores_an_empty_hypothesis_as_an_immediate_end_and_signs_its_norm(metric):
    [score] = metric.score(sources=["x"], hypotheses=[""])
    assert score < 0
    assert metric.signature()["norm"] == "word" and metric.signature()["end"] == "eos"
