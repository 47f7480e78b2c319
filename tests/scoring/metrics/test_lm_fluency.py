"""lm_fluency with the embedded SmolLM2: PEM's normalisation, batching that changes nothing, a sanity order."""

import pytest
import torch

from scoring.metrics.lm_fluency import LmFluency


@pytest.fixture(scope="module")
def metric():
    return LmFluency(device="cpu", dtype="float32", batch_size=4)


def reference(metric, text, length):
    """Sum of next-token log-probabilities of `text` after the start token, one sequence, no padding."""
    tokens = metric.tokenizer.encode(text, add_special_tokens=False)
    ids = torch.tensor([[metric.start_id, *tokens]])
    with torch.inference_mode():
        logits = metric.model(input_ids=ids).logits.float()[0]
    log_probs = torch.log_softmax(logits[:-1], dim=-1)
    return sum(log_probs[position, token].item() for position, token in enumerate(tokens)) / length


def test_it_divides_the_sentence_log_probability_by_its_words(metric):
    text = "The committee approved the new budget on Tuesday."
    [score] = metric.score(sources=["ignored"], hypotheses=[text])
    assert score == pytest.approx(reference(metric, text, length=9), abs=1e-4)  # 8 words and the full stop


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
    assert metric.signature()["norm"] == "word"
