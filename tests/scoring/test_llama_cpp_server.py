"""ParaPLUIE through a real llama.cpp server (llama-cpp-python[server]) serving the embedded SmolLM2 GGUF.

The server runs the quantised GGUF with llama.cpp's kernels; in-process, transformers de-quantises
the same file to float32. Measured on 12 demo pairs (6 paraphrases, 6 not): |served - in-process|
at most 0.229 (mean 0.075) for DIRECT and 0.149 (mean 0.058) for FS-DIRECT, and for INDIRECT read on the
same explanations at most 0.186 (mean 0.093; docs/operations/llm-servers.md); TOLERANCE leaves margin.
"""

import json

import pytest

from campaigns.models import Campaign, Pair, Score
from metrics import get_metric
from metrics.backends import parse_backends
from metrics.loading import embedded_smollm2_path, model_revision
from scoring import service
from tests.servers import REPO, llama_cpp_server

TOLERANCE = 0.35
DEMO = [json.loads(line) for line in (REPO / "fixtures" / "demo_pairs.jsonl").read_text().splitlines()]
PAIRS = [DEMO[0], DEMO[1], *[row for row in DEMO if row["label"] == 0][:2]]
SOURCES, HYPOTHESES = [row["source"] for row in PAIRS], [row["hypothesis"] for row in PAIRS]


@pytest.fixture(scope="module")
def server_url():
    with llama_cpp_server(embedded_smollm2_path()) as url:
        yield url


def backend(url, **options):
    declared = {"base_url": url, "model": "smollm2-135m-instruct-q4_1", "tokenizer": "embedded", "retries": 1}
    declared["revision"] = model_revision(str(embedded_smollm2_path()))
    return parse_backends(json.dumps({"llama": {**declared, **options}}))["llama"]


@pytest.mark.parametrize("metric", ["parapluie_direct", "parapluie_fs_direct"])
def test_parapluie_through_the_server_equals_the_in_process_score(server_url, metric):
    in_process = get_metric(metric, device="cpu", dtype="float32").score(sources=SOURCES, hypotheses=HYPOTHESES)
    served = get_metric(metric, backend=backend(server_url)).score(sources=SOURCES, hypotheses=HYPOTHESES)
    assert served == pytest.approx(in_process, abs=TOLERANCE)
    assert len({round(value, 2) for value in served}) > 1  # real scores, not one constant


def test_with_an_answer_missing_from_the_top_it_asks_for_more_and_reads_the_same_score(server_url):
    """llama-cpp-python returns as many top log-probabilities as asked: with top_logprobs=1 one answer token is
    always missing, and the wider ask (max_logprobs, capped at the vocabulary's size) finds it, exactly."""
    full = get_metric("parapluie_direct", backend=backend(server_url)).score(sources=SOURCES, hypotheses=HYPOTHESES)
    wider = get_metric("parapluie_direct", backend=backend(server_url, top_logprobs=1, max_logprobs=10**6))
    assert wider.score(sources=SOURCES, hypotheses=HYPOTHESES) == pytest.approx(full, abs=1e-4)


def test_without_a_wider_ask_it_asks_again_biased_or_says_unavailable_never_guesses(server_url):
    """llama-cpp-python 0.3.36 reports log-probabilities before logit_bias, so here each pair fails, saying why;
    a server that applies the bias first gives the full-top score again."""
    from metrics.base import ScoresFailed

    full = get_metric("parapluie_direct", backend=backend(server_url)).score(sources=SOURCES, hypotheses=HYPOTHESES)
    top_one = get_metric("parapluie_direct", backend=backend(server_url, top_logprobs=1, max_logprobs=1))
    try:
        assert top_one.score(sources=SOURCES, hypotheses=HYPOTHESES) == pytest.approx(full, abs=1e-3)
    except ScoresFailed as error:
        assert "not among its top log-probabilities" in str(error)


def test_without_logit_bias_a_missing_answer_fails_the_pair_not_a_guess(server_url):
    from metrics.base import ScoresFailed

    declared = {"top_logprobs": 1, "max_logprobs": 1, "logit_bias": False}
    metric = get_metric("parapluie_direct", backend=backend(server_url, **declared))
    with pytest.raises(ScoresFailed, match="not among its top log-probabilities .asked for 1 of"):
        metric.score(sources=SOURCES, hypotheses=HYPOTHESES)


def test_indirect_reads_its_answer_from_every_token_and_equals_the_in_process_score(server_url):
    """INDIRECT's answer after the explanation is often outside the top 5: read from the whole vocabulary's
    log-probabilities, it equals the in-process score of the same explanation within the tolerance."""
    declared = {"top_logprobs": 1, "max_logprobs": 10**6, "logit_bias": False}
    served = get_metric("parapluie_indirect", backend=backend(server_url, **declared), max_new_tokens=24)
    explanations = served.explain(SOURCES, HYPOTHESES)
    prompts = [served.prompt(s, h, e) for s, h, e in zip(SOURCES, HYPOTHESES, explanations)]
    values = [served.server_log_odds(prompt) for prompt in prompts]
    in_process = get_metric("parapluie_indirect", device="cpu", dtype="float32", max_new_tokens=24)
    sequences = [in_process.sequence_ids(s, h, e) for s, h, e in zip(SOURCES, HYPOTHESES, explanations)]
    assert values == pytest.approx(in_process.score_sequences(sequences), abs=TOLERANCE)
    assert len({round(value, 2) for value in values}) > 1


def test_a_campaign_scored_through_the_server_stores_each_score_once(server_url, settings, researcher):
    settings.PARASOL_LLM_BACKENDS = {**settings.PARASOL_LLM_BACKENDS, "llama": backend(server_url)}
    campaign = Campaign.objects.create(slug="served", name="Served", created_by=researcher)
    campaign.choose_llm_backends({"parapluie_direct": "llama"})
    pairs = Pair.objects.bulk_create(
        Pair.build(campaign, external_id=row["id"], corpus="demo", source=row["source"], hypothesis=row["hypothesis"])
        for row in PAIRS
    )
    pks = [pair.pk for pair in pairs]
    assert service.score_pairs("parapluie_direct", pks) == len(pks)
    assert service.score_pairs("parapluie_direct", pks) == 0  # a retried batch stores nothing twice
    stored = Score.objects.filter(metric="parapluie_direct")
    assert stored.count() == len(pks)
    assert {score.signature for score in stored} == {
        service.scorer_for("parapluie_direct", campaign).signature_string()
    }
    assert "backend:openai-compatible" in stored.first().signature


def test_generation_runs_through_the_server_with_concurrent_requests(server_url, settings):
    from generation import llm

    settings.PARASOL_LLM_BACKENDS = {**settings.PARASOL_LLM_BACKENDS, "llama": backend(server_url)}
    llm.get_generator.cache_clear()
    try:
        generator = llm.get_generator("llama")
        assert isinstance(generator, llm.ServerGenerator) and "llama" in llm.model_names()
        messages = [{"role": "user", "content": f"Paraphrase: {source}"} for source in SOURCES[:2]]
        prompts = [generator.render(message) for message in ([m] for m in messages)]
        decoding = {"strategy": "sampling", "max_new_tokens": 16, "temperature": 0.7, "top_p": 0.9}
        results = generator.generate(prompts, decoding=decoding, n=2, seed=3)
    finally:
        llm.get_generator.cache_clear()
    assert [len(candidates) for candidates in results] == [2, 2]
    assert all(candidate.text.strip() and not candidate.failure for candidates in results for candidate in candidates)


@pytest.mark.parametrize("metric", ["llm_vote", "llm_checked"])
def test_the_llm_judges_run_through_the_server(server_url, metric):
    judge = get_metric(metric, backend=backend(server_url), k=2, prompt="one-word")
    scores, details = judge.score_with_details(sources=SOURCES[:2], hypotheses=HYPOTHESES[:2])
    assert len(scores) == 2 and all(score == score for score in scores)  # two real numbers, no NaN
    assert [len(detail["replies"]) for detail in details] == [2, 2]
    assert judge.signature()["backend"] == "openai-compatible" and judge.oracle.calls >= 4
