"""ParaPLUIE on the embedded SmolLM2-135M-Instruct (GGUF, CPU, float32)."""

import math

import pytest
import torch

from metrics import HIGHER, MetricUnavailable, get_metric
from metrics.parapluie import render
from metrics.parapluie_templates import FEW_SHOT_EXAMPLES

# Lengths vary so that batches need padding.
SOURCES = [
    "It is raining.",
    "I love eating apples.",
    "Last year, Bush appointed him to the Homeland Security Advisory Council.",
    "Flights from New York to Florida.",
    "How does it feel to be pregnant?",
    'A sentence with "quotes", {braces} and a {hypothesis} placeholder.',
]
HYPOTHESES = [
    "It's raining.",
    "The stock market crashed in 1929.",
    "He has also served on the president's Homeland Security Advisory Council.",
    "Flights from Florida to New York.",
    "How does it look to have a bun in the oven?",
    "Same {source}.",
]


@pytest.fixture(scope="module")
def direct():
    return get_metric("parapluie_direct", device="cpu", dtype="float32", batch_size=4)


@pytest.fixture(scope="module")
def fs_direct():
    return get_metric("parapluie_fs_direct", device="cpu", dtype="float32", batch_size=4)


def papers_log_odds(metric, source, hypothesis):
    """(T+1) * (loss(Tpl∘no) - loss(Tpl∘yes)), written out independently of the metric.

    loss is the causal-LM loss with labels = input_ids: the mean cross-entropy over
    every predicted token. Tpl∘answer has len(Tpl) + 1 tokens, of which all but the
    first are predicted, so T+1 = len(Tpl) and T counts the template's tokens after
    the first. The mean is taken in float64 so that multiplying it back by T+1
    (about 550 for FS-DIRECT) does not amplify float32 rounding past 1e-4.
    """
    template = metric.sequence_ids(source, hypothesis)
    losses = []
    for answer in (metric.no_ids[0], metric.yes_ids[0]):
        input_ids = torch.tensor([template + [answer]])
        with torch.no_grad():
            logits = metric.model(input_ids=input_ids).logits[0].double()
        losses.append(torch.nn.functional.cross_entropy(logits[:-1], input_ids[0, 1:]).item())
    return len(template) * (losses[0] - losses[1])


# Each reference pass runs the whole template (~100 tokens for DIRECT, ~550 for
# FS-DIRECT) on CPU, so the slow references check fewer pairs (still of mixed lengths).
PAIR_COUNT = {"parapluie_direct": len(SOURCES), "parapluie_fs_direct": 3}
LOSS_PAIR_COUNT = {"parapluie_direct": 4, "parapluie_fs_direct": 2}


@pytest.mark.parametrize(
    ("metric_name", "fixture"), [("parapluie_direct", "direct"), ("parapluie_fs_direct", "fs_direct")]
)
def test_it_equals_the_papers_loss_formulation(request, metric_name, fixture):
    metric = request.getfixturevalue(fixture)
    sources, hypotheses = SOURCES[: LOSS_PAIR_COUNT[metric_name]], HYPOTHESES[: LOSS_PAIR_COUNT[metric_name]]
    expected = [papers_log_odds(metric, s, h) for s, h in zip(sources, hypotheses)]
    assert metric.score(sources=sources, hypotheses=hypotheses) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("metric_name", ["parapluie_direct", "parapluie_fs_direct"])
def test_batching_and_prefix_reuse_change_no_score(metric_name):
    sources, hypotheses = SOURCES[: PAIR_COUNT[metric_name]], HYPOTHESES[: PAIR_COUNT[metric_name]]
    batched = get_metric(metric_name, device="cpu", dtype="float32", batch_size=4)
    alone = get_metric(metric_name, device="cpu", dtype="float32", batch_size=1, reuse_prefix=False)
    expected = alone.score(sources=sources, hypotheses=hypotheses)
    assert batched.score(sources=sources, hypotheses=hypotheses) == pytest.approx(expected, abs=1e-4)
    prefix_ids, _ = batched.shared_prefix()
    assert len(prefix_ids) > 0
    assert all(batched.sequence_ids(s, h)[: len(prefix_ids)] == prefix_ids for s, h in zip(SOURCES, HYPOTHESES))


def test_reusing_the_prefix_does_not_mutate_it(fs_direct):
    _, prefix = fs_direct.shared_prefix()
    before = [(keys.clone(), values.clone()) for keys, values in prefix]
    sources, hypotheses = SOURCES[:3], HYPOTHESES[:3]
    first = fs_direct.score(sources=sources, hypotheses=hypotheses)
    second = fs_direct.score(sources=sources[::-1], hypotheses=hypotheses[::-1])
    assert second[::-1] == pytest.approx(first, abs=1e-5)
    assert all(torch.equal(k, k0) and torch.equal(v, v0) for (k, v), (k0, v0) in zip(prefix, before))
    assert prefix[0][0].shape[0] == 1


def test_the_sign_says_paraphrase_or_not(direct):
    # The 135M model is close to chance on this task: most of its DIRECT scores sit
    # within ±0.3 of zero whatever the pair, and FS-DIRECT is negative for every
    # pair we tried. These two pairs were picked because DIRECT gets them right
    # (about +0.15 and -0.50); the test pins the sign convention, not the model's skill.
    paraphrase, non_paraphrase = direct.score(
        sources=["It is raining.", "I love eating apples."],
        hypotheses=["It's raining.", "The stock market crashed in 1929."],
    )
    assert paraphrase > 0 > non_paraphrase
    assert direct.direction == HIGHER


def test_it_renders_the_direct_template_through_the_chat_template(direct):
    assert render(direct.tokenizer, direct.conversation("S", "H")) == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nYou will receive two sentences A and B. Do these two sentences mean the same thing? "
        'Answer with only one word "yes" or "no".<|im_end|>\n'
        "<|im_start|>assistant\nPlease provide the sentences for me to evaluate.<|im_end|>\n"
        '<|im_start|>user\nA: "S"; B: "H"<|im_end|>\n'
        "<|im_start|>assistant\n"
    )


def test_the_few_shot_template_holds_the_papers_six_examples(fs_direct):
    messages = fs_direct.conversation("S", "H")
    assert len(FEW_SHOT_EXAMPLES) == 6
    assert [m["content"] for m in messages if m["role"] == "assistant"][1:] == ["No", "Yes", "No", "No", "Yes", "No"]
    assert messages[2]["content"].endswith(
        'of deliberately distorting his evidence ."; '
        'B: "Amrozi accused his brother, whom he disparagingly referred to as '
        "'the liar witness', of intentionally twisting his testimony.\""
    )
    assert messages[-1] == {"role": "user", "content": 'A: "S"; B: "H"'}


def test_yes_and_no_are_the_first_tokens_of_the_reply(direct):
    tokens = direct.tokenizer.convert_ids_to_tokens(direct.yes_ids + direct.no_ids)
    assert tokens == ["Yes", "No"]
    variants = get_metric("parapluie_direct", device="cpu", dtype="float32", answer="variants")
    assert len(variants.yes_ids) == 4 and len(variants.no_ids) == 4


def test_indirect_generates_an_explanation_then_asks_for_one_word():
    indirect = get_metric("parapluie_indirect", device="cpu", dtype="float32", max_new_tokens=8, batch_size=2)
    sources, hypotheses = SOURCES[:2], HYPOTHESES[:2]
    explanations = indirect.explain(sources, hypotheses)
    assert all(explanations)
    scores = indirect.score(sources=sources, hypotheses=hypotheses)
    assert all(math.isfinite(value) for value in scores)
    # The same explanations scored one by one, without the prefix cache, agree.
    alone = get_metric("parapluie_indirect", device="cpu", dtype="float32", batch_size=1, reuse_prefix=False)
    expected = alone.score_sequences(
        [alone.sequence_ids(s, h, e) for s, h, e in zip(sources, hypotheses, explanations)]
    )
    assert scores == pytest.approx(expected, abs=1e-4)
    assert indirect.signature()["explain"] == "greedy,max_new_tokens=8"


def test_its_signature_identifies_model_template_and_answer_tokens(direct, fs_direct):
    signature = direct.signature()
    assert signature["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert signature["rev"].startswith("sha256:")
    assert signature["answer"] == "Yes/No:10539/5230"
    assert signature["template"] != fs_direct.signature()["template"]


def test_it_names_the_setting_when_the_model_is_missing(monkeypatch):
    monkeypatch.setenv("PARAPLUIE_MODEL", "/no/such/model-directory")
    with pytest.raises(MetricUnavailable, match="PARAPLUIE_MODEL"):
        get_metric("parapluie_direct", device="cpu")


def test_it_rejects_an_unknown_dtype():
    with pytest.raises(ValueError, match="PARAPLUIE_DTYPE"):
        get_metric("parapluie_direct", dtype="float8")
