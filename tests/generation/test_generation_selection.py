"""The selection stage: k candidates per source, ranked by a metric's stored scores, the selected ones and a
random share of the others handed to judges, idempotent under retries."""

import pytest

from annotation.assignment import open_pairs
from generation import llm
from generation.models import GenerationRun, create_run
from generation.selection import select_candidates, stage_progress
from generation.tasks import generate_batch
from generation.templates import BUILTIN_TEMPLATES
from scoring.service import score_inline
from tests.generation.test_generation_run import FakeGenerator

pytestmark = pytest.mark.django_db

SOURCES = [f"Source sentence number {n} is about the weather." for n in range(10)]


class Varied(FakeGenerator):
    """Three different candidates per source: BLEU with the source differs, so ranks are known."""

    def generate(self, prompts, *, decoding, n, seed):
        words = ["alpha", "beta gamma", "delta epsilon zeta"]
        return [[(f'B: "{prompt[4:-1]} {words[i % 3]}"', True) for i in range(n)] for prompt in prompts]


@pytest.fixture
def varied(monkeypatch):
    monkeypatch.setattr(llm, "get_generator", lambda model: Varied())


def generated(campaign, **options):
    run = create_run(
        campaign, sources=SOURCES, templates=["naive"], decoding="sampling", candidates=3, max_new_tokens=16, **options
    )
    generate_batch(run.pk, list(run.sources.values_list("pk", flat=True)))
    run.refresh_from_db()
    return run


def test_it_holds_candidates_back_until_they_are_scored_then_selects_the_top_one(campaign, varied):
    run = generated(campaign, selection_metric="lev")
    assert run.selection == GenerationRun.Selection.TOP  # several candidates: the top one by default
    assert campaign.real_pairs.count() == 30 and not open_pairs(campaign).exists()
    reason = select_candidates(run)
    assert "no lev scores yet for 30 of 30 candidates" in reason
    assert stage_progress(run)["waiting"] == reason and stage_progress(run)["selected"] == 0
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    assert select_candidates(run) == ""
    outputs = list(run.outputs.select_related("pair", "source"))
    assert sum(output.selected for output in outputs) == 10
    for output in outputs:
        # lev is lower-is-better: the shortest addition ("alpha", candidate 0) is the best.
        assert output.selected == (output.candidate == 0) and output.rank == output.candidate + 1
        metadata = output.pair.metadata
        assert (metadata["candidate_rank"], metadata["selected"]) == (output.rank, output.selected)
        assert metadata["selection_score"] == output.selection_score
        assert output.pair.chosen == metadata["sent_to_judges"]
        assert output.pair.choice_probability == (1.0 if output.selected else 0.2)
        if output.selected:
            assert output.pair.chosen
    sent = set(open_pairs(campaign).values_list("pk", flat=True))
    assert sent == {output.pair_id for output in outputs if output.pair.chosen}
    progress = stage_progress(run)
    assert (progress["candidates"], progress["scored"], progress["selected"]) == (30, 30, 10)
    assert progress["sent"] == len(sent) and progress["waiting"] == ""


def test_a_retried_selection_never_selects_twice(campaign, varied):
    run = generated(campaign, selection_metric="lev", unselected_share=0.5)
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    select_candidates(run)
    first = list(run.outputs.order_by("pk").values_list("pk", "rank", "selected", "pair__chosen"))
    run.outputs.update(selected=None)  # as if a second worker read them undecided; the pairs were written
    select_candidates(run)
    select_candidates(run)
    again = list(run.outputs.order_by("pk").values_list("pk", "rank", "selected", "pair__chosen"))
    assert again == first and sum(row[2] for row in again) == 10


def test_the_threshold_rule_and_the_bleu_bound(campaign, varied):
    run = generated(campaign, selection_metric="lev", selection="threshold", selection_threshold=12)
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    select_candidates(run)
    for output in run.outputs.all():
        assert output.selected == (output.selection_score <= 12)  # lower is better: at most the threshold
    bounded = generated(campaign, selection_metric="lev", selection_max_bleu=0)
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    select_candidates(bounded)
    assert not bounded.outputs.filter(selected=True).exists()  # every candidate copies most of its source


def test_it_refuses_a_selection_that_could_never_run(campaign, settings):
    from generation.errors import GenerationError

    with pytest.raises(GenerationError, match="unknown selection metric 'nope'"):
        create_run(campaign, sources=SOURCES, templates=["naive"], selection="top", selection_metric="nope")
    with pytest.raises(GenerationError, match="paratag is not enabled"):
        create_run(campaign, sources=SOURCES, templates=["naive"], selection="top", selection_metric="paratag")
    with pytest.raises(GenerationError, match="needs a threshold"):
        create_run(campaign, sources=SOURCES, templates=["naive"], selection="threshold", selection_metric="bleu")


def test_one_candidate_keeps_todays_behaviour(campaign, varied):
    run = create_run(campaign, sources=SOURCES[:2], templates=["naive"], max_new_tokens=16)
    generate_batch(run.pk, list(run.sources.values_list("pk", flat=True)))
    assert run.selection == GenerationRun.Selection.ALL
    assert open_pairs(campaign).count() == 2


def test_paratags_prompt_is_the_papers_and_brings_its_filters(campaign):
    (turn,) = BUILTIN_TEMPLATES["paratag"].messages("It rains.")
    assert turn["content"] == (
        "Premise: However, commercial use of the 2.6.0 kernel is still months off for most customers.\n"
        "Paraphrase: Commercial releases of the 2.6 kernel by major Linux distributors still remain months away.\n"
        "Premise: It rains.\nParaphrase:"
    )
    run = create_run(campaign, sources=SOURCES[:1], templates=["paratag"])
    assert (run.bleu_low, run.bleu_high) == (5.0, 20.0)
    own = create_run(campaign, sources=SOURCES[:1], templates=["paratag"], bleu_low=1)
    assert (own.bleu_low, own.bleu_high) == (1, None)


def test_the_runs_page_shows_each_stage_and_why_the_selection_waits(client, researcher, campaign, varied):
    from django.urls import reverse

    client.force_login(researcher)
    run = generated(campaign, selection_metric="lev")
    page = client.get(run.get_absolute_url()).content.decode()
    assert "generated" in page and "0/30" in page and "sent to judges" in page
    assert "The selection waits: no lev scores yet for 30 of 30 candidates" in page
    select = reverse("generation-select-run", args=[campaign.slug, run.pk])
    waiting = client.post(select, follow=True).content.decode()
    assert "The selection cannot run yet: no lev scores yet" in waiting
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    done = client.post(select, follow=True).content.decode()
    assert "Candidates selected" in done and "The selection waits" not in done
    assert run.outputs.filter(selected=True).count() == 10


def test_the_api_and_the_pairs_export_carry_each_candidates_selection(campaign, researcher, varied, tmp_path):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from campaigns.exports import write_csv
    from campaigns.importers import import_pairs
    from campaigns.models import Campaign
    from reports.exports import pairs_with_scores
    from reports.frames import load_frames

    run = generated(campaign, selection_metric="lev")
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    select_candidates(run)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    body = api.get(f"/api/generations/{run.pk}/").json()
    assert (body["selection"], body["selection_metric"], body["unselected_share"]) == ("top", "lev", 0.2)
    assert body["stages"]["selected"] == 10 and body["stages"]["waiting"] == ""
    outputs = api.get(f"/api/generations/{run.pk}/outputs/?page_size=100").json()["results"]
    stored = {o.pair.external_id: o for o in run.outputs.select_related("pair")}
    for output in outputs:
        mine = stored[output["pair_id"]]
        assert (output["rank"], output["selected"], output["selection_score"]) == (
            mine.rank,
            mine.selected,
            mine.selection_score,
        )
        assert output["sent_to_judges"] == mine.pair.chosen
    first = tmp_path / "first.csv"
    write_csv(pairs_with_scores(campaign)[0], first)
    exported = first.read_text(encoding="utf-8")
    header = exported.splitlines()[0].split(",")
    for column in ("candidate_rank", "selection_score", "selected", "sent_to_judges", "judging_probability"):
        assert column in header
    copy = Campaign.objects.create(slug="copy", name="Copy")
    import_pairs(copy, first.read_bytes(), filename=first.name)
    second = tmp_path / "second.csv"
    write_csv(pairs_with_scores(copy)[0], second)
    # Scores are the metric's, not the corpus's: the copy has none yet; every other cell comes back as it left.
    import pandas as pd

    pd.testing.assert_frame_equal(pd.read_csv(second, dtype=str), pd.read_csv(first, dtype=str).drop(columns="lev"))
    # The copy's report still tells selected candidates from the others.
    selected = load_frames([copy]).pairs["selected"]
    assert int(selected.sum()) == 10 and selected.notna().all()


def test_the_commands_generate_k_candidates_then_select_them(campaign, varied, tmp_path, capsys):
    from django.core.management import CommandError, call_command

    sources = tmp_path / "sources.txt"
    sources.write_text("\n".join(SOURCES[:4]))
    args = ["--template", "naive", "--n", "3", "--sampling", "--inline", "--selection-metric", "lev"]
    call_command("generate", campaign.slug, str(sources), *args, "--unselected-share", "0.5")
    run = GenerationRun.objects.get()
    assert (run.selection, run.selection_metric, run.unselected_share) == ("top", "lev", 0.5)
    out = capsys.readouterr().out
    assert "waits: no lev scores yet for 12 of 12 candidates" in out and f"select_candidates {run.pk}" in out
    with pytest.raises(CommandError, match="cannot run yet: no lev scores yet"):
        call_command("select_candidates", str(run.pk))
    score_inline(list(campaign.real_pairs.values_list("pk", flat=True)), ["lev"])
    call_command("select_candidates", str(run.pk))
    assert "4 of 12 candidates selected by lev" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no generation run 999"):
        call_command("select_candidates", "999")
