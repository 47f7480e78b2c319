"""llm_vote on the embedded SmolLM2-135M-Instruct (CPU): a working pipeline, not a good judge."""

import pytest

from metrics import HIGHER, get_metric
from metrics.llm_vote import (
    NO,
    PAPER_EQUIVALENCE,
    UNPARSEABLE,
    YES,
    fill,
    parse_answer,
    parse_explanation,
    vote,
)

SOURCES = ["It is raining.", "He repaired the bicycle with an old set of tools."]
HYPOTHESES = ["It's raining.", "The stock market crashed in 1929."]


@pytest.fixture(scope="module")
def metric():
    return get_metric("llm_vote", device="cpu", dtype="float32", k=3, seed=7)


@pytest.fixture(scope="module")
def scored(metric):
    return metric.score_with_details(sources=SOURCES, hypotheses=HYPOTHESES)


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Yes", YES),
        ("yes.", YES),
        ('{"answer": "no", "explanation": "..."}', NO),
        ("1. No, 2. yes", NO),
        ('{"explanation": "Not the same: no.", "answer": "yes"}', YES),  # the key wins over a word before it
        ("{'answer': 'No', 'explanation': 'x'}", NO),
        ("Yesterday it rained", UNPARSEABLE),
        ("1. 'The museum will close", UNPARSEABLE),
        ("", UNPARSEABLE),
    ],
)
def test_it_parses_the_first_standalone_yes_or_no(reply, answer):
    assert parse_answer(reply) == answer


@pytest.mark.parametrize(
    ("answers", "verdict", "consistency", "yes_share"),
    [
        ([YES, YES, NO], YES, 2 / 3, 2 / 3),
        ([NO, UNPARSEABLE, NO, YES, NO], NO, 3 / 5, 1 / 5),
        ([YES, NO, UNPARSEABLE, UNPARSEABLE], None, 2 / 4, 1 / 4),
        ([UNPARSEABLE, UNPARSEABLE], None, 1.0, 0.0),
    ],
)
def test_it_votes_by_majority_and_keeps_self_consistency(answers, verdict, consistency, yes_share):
    assert vote(answers) == pytest.approx((verdict, consistency, yes_share))


@pytest.mark.parametrize(
    ("reply", "explanation"),
    [
        ('{"answer": "no", "explanation": "Different years."}', "Different years."),
        ('{"answer": "yes", "explanation": "Both say it rains', "Both say it rains"),  # cut off by the token budget
        ("Yes", None),
    ],
)
def test_it_keeps_the_explanation_of_a_json_reply(reply, explanation):
    assert parse_explanation(reply) == explanation


def test_the_default_prompt_is_the_papers_prompt_5():
    assert PAPER_EQUIVALENCE.system == (
        "You are a helpful assistant that decides if two sentences are paraphrases designed to output JSON."
    )
    assert fill(PAPER_EQUIVALENCE.user, "A.", "B.") == (
        "Decide whether the following two sentences are semantically equivalent:\n1. 'A.' 2. 'B.'\n"
        "Answer yes or no and provide a short explanation. Output with keys 'answer' and 'explanation'."
    )


def test_it_fills_prompts_leaving_braces_in_sentences_alone():
    assert fill("1. '{first}' 2. '{second}'", "a {second}", "b") == "1. 'a {second}' 2. 'b'"


def test_it_stores_k_answers_and_scores_the_share_of_yes(scored):
    scores, details = scored
    assert len(scores) == len(details) == 2
    for score, detail in zip(scores, details):
        assert len(detail["answers"]) == len(detail["replies"]) == len(detail["explanations"]) == 3
        assert detail["explanations"] == [parse_explanation(reply) for reply in detail["replies"]]
        assert detail["answers"] == [parse_answer(reply) for reply in detail["replies"]]
        assert score == pytest.approx(detail["answers"].count(YES) / 3)
        assert (detail["verdict"], detail["consistency"], score) == pytest.approx(vote(detail["answers"]))


def test_the_same_seed_gives_the_same_answers(metric, scored):
    assert metric.score_with_details(sources=SOURCES, hypotheses=HYPOTHESES) == scored


def test_its_signature_names_k_sampling_and_model(metric):
    assert metric.direction == HIGHER
    signature = metric.signature()
    assert (signature["k"], signature["sampling"]) == ("3", "t=0.7,seed=7,max_new_tokens=8")
    assert signature["prompt"] == "paper,max_new_tokens=64"
    assert signature["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_it_rejects_k_below_one():
    with pytest.raises(ValueError, match="LLM_VOTE_K must be at least 1"):
        get_metric("llm_vote", k=0)
