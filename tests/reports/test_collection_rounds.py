"""ParaTag's collection loop (sections 4.1 and 4.3): two rounds on the fixture of pre-tagged pairs; the second
round's detector is trained on the first round's new taggings too, and its prompt's examples are the first
round's pairs the judges tagged as full paraphrases; the budget stops a third; the report shows each round."""

import pytest

from annotation import assignment as assign
from generation import llm
from generation.errors import GenerationError
from reports.cache import compute_report
from reports.collection import (
    ONE_EXAMPLE,
    LoopStopped,
    budget_spent,
    full_paraphrases,
    loop_spending,
    round_prompt,
    run_round,
)
from scoring import service
from tests.factories import make_judge
from tests.reports.test_span_detector import import_fixture

pytestmark = pytest.mark.django_db

SOURCES = ["Tom built the strange house on Tuesday.", "The old dog sleeps in the warm kitchen."]


class ParaphrasingLLM:
    """Answers ParaTag's prompt with three reorderings of the premise (the loop, not the LLM, is under test)."""

    revision = "fake"

    def __init__(self):
        self.prompts = []

    def render(self, messages):
        self.prompts.append(messages[-1]["content"])
        return messages[-1]["content"].rsplit("Premise: ", 1)[1].removesuffix("\nParaphrase:")

    def generate(self, prompts, *, decoding, n, seed):
        def variant(words, i):
            return " ".join(words[i:] + words[:i]).rstrip(".") + "."

        return [[(f"Paraphrase: {variant(p.split(), i + 1)}", True) for i in range(n)] for p in prompts]


def tag_what_judges_get(campaign):
    """A judge tags every pair handed out (nothing highlighted); returns the real pairs tagged."""
    judge, tagged = make_judge(campaign), []
    while (current := assign.next_assignment(judge)) is not None:
        assign.record_judgment(current, {"source": [], "hypothesis": []}, 1500)
        if not current.pair.is_training:
            tagged.append(current.pair.pk)
    return tagged


def examples_in(prompt):
    """The (premise, paraphrase) examples of a ParaTag prompt, without the source asked at its end."""
    lines = prompt.split("\n")[:-2]
    premises = [line.removeprefix("Premise: ") for line in lines[::2]]
    return list(zip(premises, [line.removeprefix("Paraphrase: ") for line in lines[1::2]]))


def test_two_rounds_retrain_the_detector_on_the_new_taggings(campaign, monkeypatch, tmp_path):
    fake = ParaphrasingLLM()
    monkeypatch.setattr(llm, "get_generator", lambda model: fake)
    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(tmp_path))
    service.scorer.cache_clear()
    campaign.task_type = "spans"
    campaign.pairs_per_judge = 500
    campaign.save()
    import_fixture(campaign, limit=36)
    options = {"candidates": 3, "decoding": "sampling", "bleu_low": 0, "bleu_high": 100, "unselected_share": 0.5}
    with pytest.raises(GenerationError, match="use one of judged, one-example"):
        round_prompt(campaign, 1, "nonsense")
    own, _where = full_paraphrases(campaign, 0)
    assert len(own) == 5  # the fixture's pairs tagged with no highlighted word
    first = run_round(campaign, SOURCES, epochs=1, seed=1, **options)
    assert (first.collection_round, first.selection_metric, first.templates) == (1, "paratag", ["paratag"])
    # Round 1's prompt: the campaign's own full paraphrases (all 5: fewer than the paper's 20), then the source.
    assert sorted(first.prompt_pairs) == sorted(pair.external_id for pair in own)
    assert sorted(examples_in(fake.prompts[0])) == sorted((pair.source, pair.hypothesis) for pair in own)
    assert fake.prompts[0].endswith(f"Premise: {SOURCES[0]}\nParaphrase:")
    assert first.detector and first.detector_f1 is not None
    outputs = list(first.outputs.filter(pair__isnull=False).select_related("pair"))
    assert len(outputs) == 6 and sum(output.selected for output in outputs) == 2  # the top one per source
    for output in outputs:
        assert output.pair.metadata["collection_round"] == 1 and output.pair.metadata["detector"] == first.detector
    sent = {output.pair_id for output in outputs if output.pair.chosen}
    tagged = tag_what_judges_get(campaign)
    assert sent <= set(tagged) and not ({output.pair_id for output in outputs} - sent) & set(tagged)

    # Round 2's prompt draws from round 1's pairs the judge tagged, none highlighted: all full paraphrases.
    fake.prompts.clear()
    second = run_round(campaign, SOURCES, epochs=1, seed=2, budget={"rounds": 2}, **options)
    assert second.collection_round == 2 and second.detector != first.detector
    round_one = {output.pair.external_id: output.pair for output in outputs if output.pair_id in tagged}
    assert len(second.prompt_pairs) == len(round_one) and set(second.prompt_pairs) == set(round_one)
    assert sorted(examples_in(fake.prompts[0])) == sorted((pair.source, pair.hypothesis) for pair in round_one.values())
    assert second.collection_budget == {"rounds": 2}
    # Trained on the fixture's taggings and the judges' new ones: the split sends most of them to training.
    assert second.detector_train_pairs > first.detector_train_pairs

    report, _frames = compute_report([campaign], "human")
    rounds = report.tables["collection_rounds"]
    assert list(rounds["round"]) == [1, 2]
    assert list(rounds["detector"]) == [first.detector, second.detector]
    assert list(rounds["detector_train_pairs"]) == [first.detector_train_pairs, second.detector_train_pairs]
    assert list(rounds["selected"]) == [2, 2] and list(rounds["candidates"]) == [6, 6]
    assert rounds.iloc[0]["sent"] == len(sent)

    # The stopping rule: the budget round 2 carried stops round 3 before any training.
    with pytest.raises(LoopStopped, match="2 rounds of 2"):
        run_round(campaign, SOURCES, epochs=1, seed=3, **options)
    assert campaign.generation_runs.count() == 2
    spending = loop_spending(campaign)
    # Only the loop's pairs count (not the fixture's the judge tagged too): round 1's, none highlighted.
    assert spending == {"rounds": 2, "accepted": len(round_one), "judgments": len(round_one)}
    assert "judgments of the loop's pairs" in budget_spent(campaign, {"judgments": len(round_one)})
    assert budget_spent(campaign, {"accepted": len(round_one) + 1}) == ""
    assert round_prompt(campaign, 3, ONE_EXAMPLE) == ("paratag", [])  # the built-in prompt, as an option


def test_a_round_without_judged_full_paraphrases_says_so(campaign):
    with pytest.raises(GenerationError, match="the campaign's own tagged pairs the judges tagged as full paraphrases"):
        round_prompt(campaign, 1)
    with pytest.raises(GenerationError, match="round 1's pairs"):
        round_prompt(campaign, 2)
