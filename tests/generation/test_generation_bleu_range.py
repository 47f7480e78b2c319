"""ParaTag's BLEU-range filter in generation runs: outputs outside the range are kept as rejected, with the reason."""

import pytest

from generation import llm
from generation.errors import GenerationError
from generation.models import create_run
from metrics.filters import pair_bleu
from tests.generation.test_generation_run import FakeGenerator

pytestmark = pytest.mark.django_db

SOURCE = "The cat sleeps on the old sofa in the living room."
UNRELATED = "Dogs bark loudly outside at night."
CLOSE = "The cat sleeps on the sofa in the living room."


@pytest.mark.parametrize(("answer", "accepted"), [(UNRELATED, False), (CLOSE, False)])
def test_it_rejects_outputs_outside_the_bleu_range_with_the_reason(campaign, monkeypatch, answer, accepted):
    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator(answer=f'B: "{answer}"'))
    run = create_run(campaign, sources=[SOURCE], templates=["naive"], bleu_low=5, bleu_high=20)
    run.run_inline()
    output = run.outputs.get()
    assert not 5 < pair_bleu(SOURCE, answer) < 20
    assert (output.accepted, output.reject_reason) == (accepted, "bleu-range")
    assert "BLEU" in run.progress()["reject_reasons"].popitem()[0]
    assert campaign.real_pairs.count() == 0


def test_it_keeps_outputs_inside_the_range_and_without_a_range(campaign, monkeypatch):
    inside = "A cat is asleep on the old couch in the lounge."
    assert 5 < pair_bleu(SOURCE, inside) < 20
    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator(answer=f'B: "{inside}"'))
    run = create_run(campaign, sources=[SOURCE], templates=["naive"], bleu_low=5, bleu_high=20)
    run.run_inline()
    assert run.outputs.get().accepted
    assert campaign.real_pairs.count() == 1


def test_a_backwards_range_is_refused(campaign):
    with pytest.raises(GenerationError, match="low < high"):
        create_run(campaign, sources=[SOURCE], templates=["naive"], bleu_low=20, bleu_high=5)


def test_with_a_bleu_range_it_also_applies_paratags_length_filter(campaign, monkeypatch):
    # Inside the BLEU range, under 3x the source's characters, but 32 words against 11: rejected for its lengths.
    answer = (
        "A cat is on the old couch in the den, and it is up on it all day as we are out at work or at the shop "
        "or in the park."
    )
    assert 5 < pair_bleu(SOURCE, answer) < 20
    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator(answer=f'B: "{answer}"'))
    run = create_run(campaign, sources=[SOURCE], templates=["naive"], bleu_low=5, bleu_high=20)
    run.run_inline()
    output = run.outputs.get()
    assert (output.accepted, output.reject_reason) == (False, "lengths")
    assert "2.5×" in run.progress()["reject_reasons"].popitem()[0]
    assert campaign.real_pairs.count() == 0
