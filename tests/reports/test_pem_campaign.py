"""PEM on a criteria campaign: the three fixed-score controls, scoring them, fit_pem, and the report's tables."""

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import assignment as assign
from annotation.controls import add_pem_controls
from campaigns.models import PEM_CONTROL_CORPUS, Campaign, Pair
from reports.task_sections.criteria import criteria_tables
from scoring.service import pairs_missing, store_scores
from tests.factories import make_judge

SYSTEMS, SOURCES = ["human1", "human2", "machine1", "machine2"], 12
SIGNATURES = {name: f"metric:{name}|version:test" for name in ("pivot_f1", "lm_fluency", "ngram_f1")}


@pytest.fixture
def pem_campaign(db, researcher):
    campaign = Campaign.objects.create(slug="pem", name="PEM", task_type="criteria", created_by=researcher)
    Pair.objects.bulk_create(
        Pair.build(
            campaign,
            external_id=f"{system}-{source}",
            corpus="mtc",
            source=f"Original sentence number {source} about the news.",
            hypothesis=f"Paraphrase {source} by {system}.",
            metadata={"system": system},
        )
        for system in SYSTEMS
        for source in range(SOURCES)
    )
    return campaign


def rate_and_score(campaign):
    """Two judges rate every real pair; each feature tracks the quality that drives the ratings."""
    rng = np.random.default_rng(5)
    quality = {}
    for pair in campaign.real_pairs:
        quality[pair.pk] = 4.5 - SYSTEMS.index(pair.metadata["system"]) + rng.normal(0, 0.4)
    for _ in range(2):
        judge = make_judge(campaign)
        for position, pair in enumerate(campaign.real_pairs, start=10):
            rating = int(np.clip(round(quality[pair.pk] + rng.normal(0, 0.5)), 1, 5))
            ratings = {"adequacy": rating, "fluency": 4, "dissimilarity": 3, "overall": rating}
            assign.record_judgment(judge.assignments.create(pair=pair, position=position, top="source"), ratings, 900)
    controls = {pair.pk: pair.metadata["control"] for pair in campaign.control_pairs.filter(corpus=PEM_CONTROL_CORPUS)}
    fixed = {"pem-source": (1.0, -3.0, 1.0), "pem-random": (0.0, -3.0, 0.1), "pem-unigram": (0.0, -9.0, 0.2)}
    pks = [*quality, *controls]
    for index, name in enumerate(SIGNATURES):
        values = [quality[pk] / 5 + index for pk in quality] + [fixed[controls[pk]][index] for pk in controls]
        store_scores(name, SIGNATURES[name], pks, values)


def test_it_adds_three_controls_per_source_that_judges_never_see(pem_campaign):
    assert add_pem_controls(pem_campaign, seed=1) == 3 * SOURCES
    assert add_pem_controls(pem_campaign, seed=1) == 0  # sources that have them are skipped
    controls = pem_campaign.control_pairs.filter(corpus=PEM_CONTROL_CORPUS)
    source = "Original sentence number 3 about the news."
    by_kind = {pair.metadata["control"]: pair for pair in controls.filter(source=source)}
    assert by_kind["pem-source"].hypothesis == source
    assert by_kind["pem-random"].hypothesis != source and by_kind["pem-random"].hypothesis.startswith("Original")
    assert len(by_kind["pem-unigram"].hypothesis.split()) == 8  # as many tokens as the source (7 words, 1 stop)
    assert not pem_campaign.check_pairs.filter(corpus=PEM_CONTROL_CORPUS).exists()
    # Scored like real pairs: the scoring sweep finds them.
    missing = set(pairs_missing("lev", "metric:lev|version:1", campaign=pem_campaign).values_list("pk", flat=True))
    assert set(controls.values_list("pk", flat=True)) <= missing


def test_the_command_refuses_a_similarity_campaign(campaign):
    with pytest.raises(CommandError, match="PEM's four ratings"):
        call_command("pem_controls", campaign.slug, stdout=io.StringIO())


def test_fit_pem_stores_a_versioned_model_with_its_held_out_correlation(pem_campaign, settings, tmp_path):
    settings.PARASOL_PEM_MODEL_DIR = str(tmp_path)
    call_command("pem_controls", "pem", stdout=io.StringIO())
    rate_and_score(pem_campaign)
    out = io.StringIO()

    call_command("fit_pem", "pem", "--folds", "3", stdout=out)

    folder = tmp_path / f"campaign-{pem_campaign.pk}"  # keyed by pk: a slug may be renamed or reused
    manifest = json.loads((folder / "v1" / "manifest.json").read_text())
    assert manifest["campaign_pk"] == pem_campaign.pk
    assert manifest["campaign"] == "pem" and manifest["version"] == "v1" and manifest["split"] == "sources"
    assert manifest["features"] == SIGNATURES and manifest["controls"] is True
    assert manifest["n_pairs"] == 7 * SOURCES and manifest["n_sources"] == SOURCES
    assert manifest["sentence_level"] > 0.5
    assert "Stored PEM model" in out.getvalue() and "Held-out (sources)" in out.getvalue()
    call_command("fit_pem", "pem", "--split", "paper", "--without-controls", stdout=io.StringIO())
    second = json.loads((folder / "v2" / "manifest.json").read_text())
    assert second["split"] == "paper" and second["controls"] is False and second["n_pairs"] == 4 * SOURCES


def test_fit_pem_names_the_missing_features(pem_campaign):
    with pytest.raises(CommandError, match="no pivot_f1, lm_fluency, ngram_f1 scores"):
        call_command("fit_pem", "pem", stdout=io.StringIO())


def test_the_criteria_report_shows_pems_held_out_fit_and_the_controls_in_the_reference(pem_campaign, settings):
    call_command("pem_controls", "pem", stdout=io.StringIO())
    rate_and_score(pem_campaign)

    tables = criteria_tables([pem_campaign])

    fit = tables["criteria_pem_fit"].set_index("split")
    assert fit["features"].iloc[0].startswith("PEM: pivot_f1, lm_fluency, ngram_f1")
    assert fit["n_pairs"].iloc[0] == 7 * SOURCES and fit["sentence_level"].iloc[0] > 0.5
    judges = tables["criteria_pem_judges"].set_index("reference")
    assert judges.loc["human mean", "n_systems"] == 7 and judges.filter(like="judge", axis=0)["n_systems"].eq(4).all()
    assert tables["criteria_vs_overall"].set_index("row").loc["adequacy", "n_systems"] == 7
    correlation = tables["criteria_system_correlation"].set_index(["metric", "criterion"])
    assert correlation.loc[("pivot_f1", "overall"), "n_systems"] == 7
    # The Systems section of a criteria campaign correlates with mean Overall, not a binary rate.
    overall = tables["system_correlation"].set_index("metric")
    assert overall.loc["pivot_f1", "pearson"] == correlation.loc[("pivot_f1", "overall"), "pearson"]

    settings.PARASOL_PEM_CONTROLS_IN_REFERENCE = False
    from django.core.cache import cache

    cache.clear()
    without = criteria_tables([pem_campaign])
    assert without["criteria_vs_overall"].set_index("row").loc["adequacy", "n_systems"] == 4


def test_a_criteria_table_downloads_from_its_campaign_and_another_types_table_does_not(
    pem_campaign, client, researcher
):
    rate_and_score(pem_campaign)
    client.force_login(researcher)
    response = client.get(reverse("reports-download-task-table", args=["pem", "criteria_alpha"]))
    assert response.status_code == 200 and response.content.decode().startswith("criterion,")
    for name in ("span_agreement", "system_correlation"):  # a span table; a report table criteria replaces
        assert client.get(reverse("reports-download-task-table", args=["pem", name])).status_code == 404
