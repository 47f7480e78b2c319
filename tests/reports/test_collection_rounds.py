"""ParaTag's collection loop (section 4.3): two rounds on the fixture of pre-tagged pairs; the second round's
detector is trained on the first round's new taggings too; the report shows each round."""

import pytest

from annotation import assignment as assign
from generation import llm
from reports.cache import compute_report
from reports.collection import run_round
from scoring import service
from tests.factories import make_judge
from tests.reports.test_span_detector import import_fixture

pytestmark = pytest.mark.django_db

SOURCES = ["Tom built the strange house on Tuesday.", "The old dog sleeps in the warm kitchen."]


class ParaphrasingLLM:
    """Answers ParaTag's prompt with three reorderings of the premise (the loop, not the LLM, is under test)."""

    revision = "fake"

    def render(self, messages):
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


def test_two_rounds_retrain_the_detector_on_the_new_taggings(campaign, monkeypatch, tmp_path):
    monkeypatch.setattr(llm, "get_generator", lambda model: ParaphrasingLLM())
    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(tmp_path))
    service.scorer.cache_clear()
    campaign.task_type = "spans"
    campaign.pairs_per_judge = 500
    campaign.save()
    import_fixture(campaign, limit=36)
    options = {"candidates": 3, "decoding": "sampling", "bleu_low": 0, "bleu_high": 100, "unselected_share": 0.5}
    first = run_round(campaign, SOURCES, epochs=1, seed=1, **options)
    assert (first.collection_round, first.selection_metric, first.templates) == (1, "paratag", ["paratag"])
    assert first.detector and first.detector_f1 is not None
    outputs = list(first.outputs.filter(pair__isnull=False).select_related("pair"))
    assert len(outputs) == 6 and sum(output.selected for output in outputs) == 2  # the top one per source
    for output in outputs:
        assert output.pair.metadata["collection_round"] == 1 and output.pair.metadata["detector"] == first.detector
    sent = {output.pair_id for output in outputs if output.pair.chosen}
    tagged = tag_what_judges_get(campaign)
    assert sent <= set(tagged) and not ({output.pair_id for output in outputs} - sent) & set(tagged)

    second = run_round(campaign, SOURCES, epochs=1, seed=2, **options)
    assert second.collection_round == 2 and second.detector != first.detector
    # Trained on the fixture's taggings and the judges' new ones: the split sends most of them to training.
    assert second.detector_train_pairs > first.detector_train_pairs

    report, _frames = compute_report([campaign], "human")
    rounds = report.tables["collection_rounds"]
    assert list(rounds["round"]) == [1, 2]
    assert list(rounds["detector"]) == [first.detector, second.detector]
    assert list(rounds["detector_train_pairs"]) == [first.detector_train_pairs, second.detector_train_pairs]
    assert list(rounds["selected"]) == [2, 2] and list(rounds["candidates"]) == [6, 6]
    assert rounds.iloc[0]["sent"] == len(sent)
