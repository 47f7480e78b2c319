"""ParaTag's detector trained on a campaign's taggings: it learns, it scores, its versions stay apart.

One detector is trained for the module, through the real command, on the project's fixture of
tagged pairs (fixtures/span_detector_pairs.jsonl: synonyms untagged, changed facts and
insertions tagged); 3 epochs at a fixed seed keep it near a minute on a loaded CPU.
"""

import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import assignment as assign
from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from campaigns.scores import latest_signatures
from metrics.paratag import ParaTag, campaign_detectors_path, detector_versions, read_manifest
from metrics.paratag_training import MIN_TAGGED_PAIRS, split_by_source
from reports.detector import human_agreement, tagged_pairs
from reports.task_sections.spans import span_tables
from scoring import service
from tests import servers
from tests.factories import make_judge, without_controls

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "span_detector_pairs.jsonl"


def import_fixture(campaign, limit=None):
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    import_pairs(campaign, b"".join(lines[:limit]))
    without_controls(campaign)


@pytest.fixture(scope="module")
def detectors(tmp_path_factory, django_db_setup, django_db_blocker):
    """The one version trained on the fixture, in its campaign's own directory (the campaign is removed afterwards)."""
    directory = tmp_path_factory.mktemp("detectors")
    with django_db_blocker.unblock():
        campaign = Campaign.objects.create(slug="tagged", name="Tagged", task_type="spans")
        try:
            import_fixture(campaign)
            with pytest.MonkeyPatch.context() as patch:
                patch.setenv("PARATAG_DETECTORS_DIR", str(directory))
                call_command("train_span_detector", "tagged", "--epochs", "3", "--lr", "1e-4", stdout=io.StringIO())
            own = campaign_detectors_path(campaign.pk, directory)
        finally:
            campaign.delete()
    (version,) = detector_versions(own)
    return own / version


@pytest.fixture
def in_detectors(tmp_path, monkeypatch):
    """An empty detectors root of this test's own; `give_detector` puts the trained version in a campaign's."""
    root = tmp_path / "detectors"
    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(root))
    service.scorer.cache_clear()
    yield root
    service.scorer.cache_clear()


def give_detector(campaign, trained, name=None):
    """The trained version, linked into the campaign's own directory (as its training would have stored it)."""
    directory = campaign_detectors_path(campaign.pk)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / (name or trained.name)).symlink_to(trained, target_is_directory=True)
    return directory / (name or trained.name)


def the_manifest(version):
    return read_manifest(version)


def test_the_trained_detector_beats_tagging_nothing_and_tagging_every_different_word(detectors):
    manifest = the_manifest(detectors)
    test, baselines = manifest["test"], manifest["baselines"]
    assert test["n_pairs"] == manifest["split"]["n_pairs"]["test"] > 0
    assert test["span_f1"] > baselines["tag_different_words"]["span_f1"] > baselines["tag_nothing"]["span_f1"]
    assert test["word_accuracy"] > baselines["tag_different_words"]["word_accuracy"]
    assert test["word_accuracy"] > baselines["tag_nothing"]["word_accuracy"]


def test_the_manifest_names_campaign_split_seed_encoder_and_scores(detectors):
    manifest = the_manifest(detectors)
    assert manifest["campaign"] == "tagged"
    assert manifest["split"]["by"] == "source" and manifest["split"]["seed"] == 13
    assert manifest["encoder"].startswith("all-MiniLM-L6-v2")
    assert 20_000_000 < manifest["parameters"] < 25_000_000  # the 22M-parameter encoder and a 2 x 384 head
    assert manifest["training"]["optimiser"] == "AdamW" and manifest["training"]["learning_rates"] == [1e-4]
    assert manifest["campaign_pk"] and detectors.parent.name == f"campaign-{manifest['campaign_pk']}"
    assert "detector" in (detectors / "card.md").read_text()


def test_the_split_puts_each_source_in_one_part_only():
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    from metrics.paratag_training import TaggedPair
    from metrics.words import word_tokens

    pairs = [
        TaggedPair(row["id"], {side: word_tokens(row[side]) for side in ("source", "hypothesis")}, {}) for row in rows
    ]
    parts = split_by_source(pairs, seed=5)
    sources = [{pair.source_text for pair in part} for part in parts]
    assert all(sources) and sum(len(part) for part in parts) == len(pairs)
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])
    assert len(parts[2]) <= 0.1 * len(pairs) + 3  # one source holds three pairs


@pytest.mark.django_db
def test_it_refuses_a_campaign_with_too_few_tagged_pairs_and_says_how_many(campaign):
    campaign.task_type = "spans"
    campaign.save()
    import_fixture(campaign, limit=12)
    with pytest.raises(CommandError, match=f"at least {MIN_TAGGED_PAIRS} tagged pairs.*has 12 tagged pair"):
        call_command("train_span_detector", campaign.slug, stdout=io.StringIO())


@pytest.mark.django_db
def test_it_refuses_an_encoder_that_is_not_a_model_directory(campaign, tmp_path):
    campaign.task_type = "spans"
    campaign.save()
    import_fixture(campaign)
    with pytest.raises(CommandError, match="local Hugging Face model directory"):
        call_command("train_span_detector", campaign.slug, "--encoder", str(tmp_path / "none"), stdout=io.StringIO())


@pytest.fixture
def scored_campaign(campaign, detectors, in_detectors):
    """Fixture pairs with two judges' taggings on five of them, scored inline with paratag by its own detector."""
    campaign.task_type = "spans"
    campaign.save()
    give_detector(campaign, detectors)
    import_fixture(campaign, limit=30)
    pairs = list(campaign.real_pairs.order_by("pk")[:5])
    for _ in range(2):
        judge = make_judge(campaign)
        for position, pair in enumerate(pairs, start=1):
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            tags = {side: [i for i, tag in enumerate(pair.gold_tags[side]) if tag] for side in ("source", "hypothesis")}
            assign.record_judgment(assignment, tags)
    service.score_campaign_inline(campaign, "paratag")
    return campaign


def test_paratag_scores_every_pair_with_equations_5_to_7_and_predicted_tags(scored_campaign):
    scores = list(Score.objects.filter(pair__campaign=scored_campaign, metric="paratag").select_related("pair"))
    assert len(scores) == 30
    for score in scores:
        details = score.details
        assert score.value == pytest.approx(details["fscore"])  # the default variant is FScore (equation 5)
        n = details["n_words"]
        assert n == {side: len(score.pair.words(side)) for side in ("source", "hypothesis")}
        # FScore is the mean over both sentences: the word-weighted mean of PScore (hypothesis) and RScore (source).
        weighted = (details["pscore"] * n["hypothesis"] + details["rscore"] * n["source"]) / sum(n.values())
        assert details["fscore"] == pytest.approx(weighted)
        tagged = len(details["tags"]["source"]) + len(details["tags"]["hypothesis"])
        assert details["tagged_share"] == pytest.approx(tagged / sum(n.values()))
        assert details["detector"] in score.signature


def test_the_report_and_the_export_carry_paratag(scored_campaign, client, researcher):
    tables = span_tables([scored_campaign])
    versus = tables["detector_vs_judges"].set_index("against")
    # The 25 pairs no judge tagged count with their imported reference tagging.
    assert versus.loc["majority", "n_pairs"] == 30 and versus.loc["reference", "n_pairs"] == 25
    judges = [name for name in versus.index if name not in ("majority", "reference")]
    assert len(judges) == 2 and all(versus.loc[judges, "n_pairs"] == 5)
    assert {"kappa", "span_f1", "word_accuracy"} <= set(versus.columns)
    assert versus["word_accuracy"].between(0, 1).all()
    client.force_login(researcher)
    response = client.get(reverse("reports-export-pairs", args=[scored_campaign.slug]))
    page = pd.read_csv(io.StringIO(b"".join(response.streaming_content).decode()), comment="#")
    assert len(page) == 30 and page["paratag"].notna().all()
    assert page["paratag_details"].map(lambda text: "tags" in json.loads(text)).all()


def test_signatures_separate_detector_versions_and_tables_use_the_latest(scored_campaign, detectors):
    first = Score.objects.filter(metric="paratag").values_list("signature", flat=True).first()
    # A retraining stores a new version beside the first; the same weights are enough to see versions kept apart.
    copy = campaign_detectors_path(scored_campaign.pk) / "9999-retrained"
    shutil.copytree(detectors, copy)
    try:
        manifest = read_manifest(copy) | {"version": copy.name}
        (copy / "manifest.json").write_text(json.dumps(manifest))
        service.score_campaign_inline(scored_campaign, "paratag")
        signatures = set(Score.objects.filter(metric="paratag").values_list("signature", flat=True))
        latest = latest_signatures(Score.objects.filter(metric="paratag"))["paratag"]
    finally:
        shutil.rmtree(copy)
    assert len(signatures) == 2 and first in signatures
    assert f"detector:campaign-{scored_campaign.pk}/9999-retrained" in latest and "9999-retrained" not in first
    assert Score.objects.filter(metric="paratag", signature=latest).count() == 30


def test_the_variant_selects_pscore_or_rscore_and_names_it_in_the_signature(detectors):
    sources, hypotheses = ["Anna bought the big car on Monday."], ["Anna purchased the large boat on Friday."]
    results = {}
    for name in ("f", "p", "r"):
        metric = ParaTag(score=name, device="cpu", detectors_dir=detectors.parent)
        values, details = metric.score_with_details(sources=sources, hypotheses=hypotheses)
        results[name] = (values[0], details[0], metric.signature_string())
    assert results["p"][0] == pytest.approx(results["p"][1]["pscore"])
    assert results["r"][0] == pytest.approx(results["r"][1]["rscore"])
    assert len({signature for _, _, signature in results.values()}) == 3
    assert "score:PScore" in results["p"][2]


@pytest.mark.django_db
def test_human_agreement_is_the_reports_overall_row(campaign):
    campaign.task_type = "spans"
    campaign.save()
    import_fixture(campaign, limit=3)
    for offset in (0, 1):
        judge = make_judge(campaign)
        for position, pair in enumerate(campaign.real_pairs.order_by("pk"), start=1):
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, {"source": [offset], "hypothesis": [0]})
    _examples, _pairs, taggings = tagged_pairs(campaign)
    overall = span_tables([campaign])["span_agreement"].iloc[0]
    assert human_agreement(taggings)["span_f1"] == pytest.approx(overall["span_f1"])
    assert human_agreement(taggings)["word_accuracy"] == pytest.approx(overall["word_accuracy"])


@pytest.mark.django_db
def test_the_detector_panel_is_hidden_from_outsiders(client, campaign, outsider):
    client.force_login(outsider)
    assert client.get(reverse("reports-show-detector", args=[campaign.slug])).status_code in (302, 404)
    assert client.post(reverse("reports-train-detector", args=[campaign.slug])).status_code in (302, 404)


@pytest.mark.django_db
def test_retraining_without_a_reachable_broker_says_so_on_the_panel(client, campaign, researcher):
    campaign.task_type = "spans"
    campaign.save()
    import_fixture(campaign)  # enough tagged pairs: the broker is what fails
    client.force_login(researcher)
    with servers.unreachable_broker():
        response = client.post(reverse("reports-train-detector", args=[campaign.slug]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "no worker reachable" in response.content.decode()
    page = client.get(reverse("annotation-show-campaign", args=[campaign.slug])).content.decode()
    assert reverse("reports-show-detector", args=[campaign.slug]) in page


@pytest.mark.django_db
def test_the_retraining_task_leaves_its_refusal_where_the_panel_shows_it_and_runs_twice(
    client, campaign, researcher, tmp_path, monkeypatch
):
    from reports.detector import claim_training, training_status
    from reports.tasks import train_detector_task

    monkeypatch.setenv("PARATAG_DETECTORS_DIR", str(tmp_path))
    campaign.task_type = "spans"
    campaign.save()
    import_fixture(campaign, limit=12)
    assert detector_versions(campaign_detectors_path(campaign.pk)) == []
    for _ in range(2):
        assert claim_training(campaign.pk)  # the lock is free again after each run
        assert not claim_training(campaign.pk)
        assert train_detector_task(campaign.pk, {}) is None
        assert training_status(campaign.pk)["stage"] == "refused"
    assert detector_versions(campaign_detectors_path(campaign.pk)) == []
    client.force_login(researcher)
    panel = client.get(reverse("reports-show-detector", args=[campaign.slug])).content.decode()
    assert f"at least {MIN_TAGGED_PAIRS} tagged pairs" in panel and "Train the detector" in panel


@pytest.fixture
def too_few_tags(campaign, settings):
    """A span campaign with 20 tagged pairs, and a broker that is not there: any queueing would say so."""
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    campaign.task_type = "spans"
    campaign.save()
    import_fixture(campaign, limit=20)
    return campaign


def test_the_train_button_is_disabled_and_says_what_is_missing(client, researcher, too_few_tags):
    client.force_login(researcher)
    panel = client.get(reverse("reports-show-detector", args=[too_few_tags.slug])).content.decode()

    assert '<button type="submit" disabled aria-describedby="detector-shortfall">Train the detector</button>' in panel
    assert f"needs at least {MIN_TAGGED_PAIRS} tagged pairs" in panel
    assert "this campaign has 20 tagged pair(s)" in panel


@pytest.mark.parametrize("htmx", [True, False])
def test_a_post_that_cannot_train_queues_nothing_and_says_why(client, researcher, too_few_tags, htmx):
    from reports.detector import claim_training, release_training, training_status

    client.force_login(researcher)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.post(reverse("reports-train-detector", args=[too_few_tags.slug]), follow=not htmx, **headers)

    text = response.content.decode()
    assert f"needs at least {MIN_TAGGED_PAIRS} tagged pairs" in text and "this campaign has 20 tagged pair(s)" in text
    assert "already under way" not in text and "no worker reachable" not in text
    assert training_status(too_few_tags.pk) is None  # nothing claimed, nothing sent to the broker
    assert claim_training(too_few_tags.pk)
    release_training(too_few_tags.pk)
    if not htmx:
        assert "The detector was not queued: training a detector needs" in text


@pytest.mark.django_db
def test_another_researchers_campaign_panel_is_not_found(client, campaign, django_user_model):
    other = django_user_model.objects.create_user("other", password="pw-other-123", is_staff=True)
    client.force_login(other)
    assert client.get(reverse("reports-show-detector", args=[campaign.slug])).status_code == 404
    assert client.post(reverse("reports-train-detector", args=[campaign.slug])).status_code == 404


@pytest.mark.django_db
def test_the_panel_lists_the_campaigns_detectors_with_their_test_figures(client, researcher, detectors, in_detectors):
    campaign = Campaign.objects.create(slug="tagged", name="Tagged", task_type="spans", created_by=researcher)
    give_detector(campaign, detectors)
    manifest = the_manifest(detectors)
    client.force_login(researcher)
    panel = client.get(reverse("reports-show-detector", args=[campaign.slug])).content.decode()
    assert manifest["version"] in panel and f"{manifest['test']['span_f1']:.3f}" in panel
    assert "—" in panel  # no judges tagged the fixture: no human figure to show
    assert "Retrain the detector" in panel


def test_the_taggings_export_puts_the_detectors_tags_beside_the_judges(scored_campaign, client, researcher):
    client.force_login(researcher)
    response = client.get(reverse("reports-export-taggings", args=[scored_campaign.slug]))
    lines = [json.loads(line) for line in response.content.decode().splitlines()]
    judged, predicted = [x for x in lines if not x["predicted"]], [x for x in lines if x["predicted"]]
    assert len(judged) == 10 and len(predicted) == 30  # two judges on five pairs; the detector on every pair
    details = {
        score.pair.external_id: score.details
        for score in Score.objects.filter(pair__campaign=scored_campaign, metric="paratag").select_related("pair")
    }
    for line in predicted:
        assert line["judge"] == f"detector {details[line['pair_id']]['detector']}"
        for side in ("source", "hypothesis"):
            assert len(line[f"{side}_tags"]) == len(line[f"{side}_tokens"])
            tagged = [i for i, tag in enumerate(line[f"{side}_tags"]) if tag]
            assert tagged == details[line["pair_id"]]["tags"][side]
