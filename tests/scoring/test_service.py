import pytest
from django.core.management import CommandError, call_command

from campaigns.models import Score
from scoring import service
from tests.factories import add_pairs


@pytest.fixture
def pairs(campaign):
    return add_pairs(campaign, 5)


def test_it_scores_each_pair_once_even_when_run_twice(pairs):
    ids = [pair.pk for pair in pairs]
    assert service.score_pairs("lev", ids) == 5
    assert service.score_pairs("lev", ids) == 0
    assert Score.objects.filter(metric="lev").count() == 5


def test_it_stores_the_metric_signature_with_each_score(pairs):
    service.score_pairs("bleu", [pairs[0].pk])
    score = Score.objects.get()
    assert score.signature == service.scorer("bleu").signature_string()
    assert "metric:bleu" in score.signature


def test_it_never_scores_training_pairs(campaign):
    campaign.ensure_training_pairs()
    service.score_pairs("lev", list(campaign.pairs.values_list("pk", flat=True)))
    assert not Score.objects.exists()


def test_the_score_command_fills_missing_scores_inline(pairs):
    call_command("score", "demo", "--metrics", "lev", "bleu", "--inline")
    assert Score.objects.filter(metric="lev").count() == 5
    assert Score.objects.filter(metric="bleu").count() == 5


def test_the_score_command_names_unknown_metrics(pairs):
    with pytest.raises(CommandError, match="unknown metric"):
        call_command("score", "demo", "--metrics", "lev", "rouge", "--inline")


def test_the_score_command_names_an_unknown_campaign(db):
    with pytest.raises(CommandError, match="no campaign"):
        call_command("score", "nowhere", "--inline")


def test_score_file_scores_a_file_offline(tmp_path, db):
    source = tmp_path / "in.csv"
    source.write_text("source,hypothesis,label\nThe cat sat.,The cat sat.,1\nA dog ran.,Stocks fell sharply.,0\n")
    out = tmp_path / "out.csv"
    call_command("score_file", str(source), "--out", str(out), "--metrics", "lev", "bleu")
    import pandas as pd

    frame = pd.read_csv(out)
    assert frame["lev"].tolist()[0] == 0.0 and frame["lev"].tolist()[1] > 0.5
    assert frame["bleu"].tolist()[0] == pytest.approx(1.0)


def test_score_file_names_a_missing_file(tmp_path, db):
    with pytest.raises(CommandError, match="no such file"):
        call_command("score_file", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o.csv"))


def test_it_never_scores_control_items(campaign):
    campaign.pairs.create(external_id="control-1", source="A.", hypothesis="A.", gold_label=1, is_control=True)
    assert service.score_pairs("lev", list(campaign.pairs.values_list("pk", flat=True))) == 0
    assert not Score.objects.exists()


def test_language_model_metrics_go_to_the_gpu_queue_in_small_batches(settings):
    settings.PARASOL_SCORING_BATCH_SIZE, settings.PARASOL_CPU_SCORING_BATCH_SIZE = 3, 700
    assert (service.queue_of("parapluie_direct"), service.batch_size("parapluie_direct")) == ("gpu", 3)
    assert (service.queue_of("lev"), service.batch_size("lev")) == ("cpu", 700)


def test_stored_scores_split_into_statements_under_the_parameter_limit_are_each_stored_once(pairs, monkeypatch):
    from django.db import connection

    # A limit of 10 parameters: 3 for the whole statement, then 2 rows of 3 per statement.
    monkeypatch.setattr(connection.features, "max_query_params", 10)
    ids = [pair.pk for pair in pairs]
    details = [{"answer": f"raw {i}"} for i in range(5)]
    service.store_scores("lev", "metric:lev|test", ids, [0.1, 0.2, 0.3, 0.4, 0.5], details)
    service.store_scores("lev", "metric:lev|test", ids, [9.0] * 5, details)  # a retried batch changes nothing
    stored = list(Score.objects.order_by("pair_id").values_list("pair_id", "value", "details", "signature"))
    assert stored == [(pk, v, d, "metric:lev|test") for pk, v, d in zip(ids, [0.1, 0.2, 0.3, 0.4, 0.5], details)]


def test_the_inline_scoring_of_a_campaign_pages_past_every_scored_pair(campaign, settings):
    settings.PARASOL_CPU_SCORING_BATCH_SIZE = 2
    pairs = add_pairs(campaign, 5)
    service.score_pairs("lev", [pairs[1].pk, pairs[3].pk])  # holes in the pages
    assert service.score_campaign_inline(campaign, "lev") == 3
    assert Score.objects.filter(metric="lev").count() == 5
    assert service.score_campaign_inline(campaign, "lev") == 0
