"""ParaTag's pattern filter (section 4.1) in generation runs: an answer off its Paraphrase line is kept as
rejected, with the reason; a run may turn the filter off; it never touches A.2's templates."""

import pytest

from generation import llm
from generation.models import create_run
from tests.generation.test_generation_run import FakeGenerator

pytestmark = pytest.mark.django_db

SOURCE = "The committee approved the new budget on Monday after a long debate."
ANSWER = "On Monday, after a lengthy debate, the committee passed the new budget."
RANGE = {"bleu_low": 0, "bleu_high": 100}  # the BLEU range is not what is under test


@pytest.mark.parametrize(
    ("raw", "finished", "reason"),
    [
        (f" {ANSWER}\nPremise: The dog barks.\nParaphrase: A dog", False, ""),  # the line ended: a decoded pair
        (f" {ANSWER}", True, ""),  # the turn ended
        (f"Sure! Here is a paraphrase:\n{ANSWER}", True, "pattern"),  # not on the Paraphrase line
        (f"1. {ANSWER}\n2. Another one.", True, "pattern"),
        (f" {ANSWER} Premise: The dog barks.", False, "pattern"),  # no newline after it
    ],
)
def test_it_keeps_only_answers_on_their_paraphrase_line(campaign, monkeypatch, raw, finished, reason):
    fake = FakeGenerator(answer=raw)
    fake.generate = lambda prompts, **kw: [[(raw, finished)] for _ in prompts]
    monkeypatch.setattr(llm, "get_generator", lambda model: fake)
    run = create_run(campaign, sources=[SOURCE], templates=["paratag"], **RANGE)
    assert run.pattern_filter  # the paper's filter, on by default
    run.run_inline()
    output = run.outputs.get()
    assert (output.text, output.reject_reason) == (ANSWER, reason)
    assert campaign.real_pairs.count() == (0 if reason else 1)


def test_a_run_may_turn_the_filter_off_and_a2_templates_never_use_it(campaign, monkeypatch):
    raw = f"Sure! Here is a paraphrase:\n{ANSWER}"
    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator(answer=raw))
    unfiltered = create_run(campaign, sources=[SOURCE], templates=["paratag"], pattern_filter=False, **RANGE)
    unfiltered.run_inline()
    a2 = create_run(campaign, sources=[SOURCE], templates=["naive"])
    a2.run_inline()
    for run in (unfiltered, a2):
        output = run.outputs.get()
        assert (output.text, output.accepted) == (ANSWER, True)
