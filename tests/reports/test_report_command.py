from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from campaigns.importers import import_pairs
from scoring.metrics.registry import get_metric
from scoring.models import Score

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "mrpc_sample.tsv"


def score_pairs(campaign, metric_name):
    metric = get_metric(metric_name)
    pairs = list(campaign.real_pairs.order_by("pk"))
    values = metric.score(sources=[p.source for p in pairs], hypotheses=[p.hypothesis for p in pairs])
    Score.objects.bulk_create(
        Score(pair=pair, metric=metric_name, signature=metric.signature_string(), value=value)
        for pair, value in zip(pairs, values)
    )
    return pd.Series(values, index=[p.external_id for p in pairs])


def best_by_brute_force(scores, labels, direction):
    """The a-posteriori threshold scanned one value at a time with sklearn (strictest among equal accuracies)."""
    best = None
    for t in sorted(set(scores), reverse=direction == "higher"):
        predicted = scores >= t if direction == "higher" else scores <= t
        accuracy = accuracy_score(labels, predicted)
        if best is None or accuracy > best[1]:
            best = (
                t,
                accuracy,
                f1_score(labels, predicted),
                recall_score(labels, predicted),
                precision_score(labels, predicted, zero_division=0),
            )
    return best


@pytest.fixture
def scored_campaign(campaign):
    import_pairs(campaign, FIXTURE.read_bytes(), format="mrpc")
    scores = {name: score_pairs(campaign, name) for name in ("lev", "bleu")}
    gold = pd.Series({p.external_id: p.gold_label for p in campaign.real_pairs})
    return campaign, scores, gold


def test_it_reproduces_tables_1_and_3_on_a_gold_labelled_mrpc_sample(scored_campaign, tmp_path):
    campaign, scores, gold = scored_campaign
    call_command("report", campaign.slug, "--label-source", "gold", "--out", str(tmp_path), "--no-figures")
    table1 = pd.read_csv(tmp_path / "table1.csv").set_index(["metric", "corpus", "label"])
    table3 = pd.read_csv(tmp_path / "table3.csv")
    for metric, direction in (("lev", "lower"), ("bleu", "higher")):
        values = scores[metric]
        for value, name in ((1, "paraphrase"), (0, "non_paraphrase")):
            chosen = values[gold[values.index] == value].to_numpy()
            row = table1.loc[(metric, "MRPC", name)]
            assert row["mean"] == pytest.approx(np.mean(chosen))
            assert row["std"] == pytest.approx(np.std(chosen, ddof=1))
            assert row["n"] == 10 and row["direction"] == direction
        labels = gold[values.index].to_numpy(dtype=int)
        threshold, accuracy, f1, recall, precision = best_by_brute_force(values.to_numpy(), labels, direction)
        row = table3[(table3["metric"] == metric) & (table3["corpus"] == "MRPC")].iloc[0]
        assert row["threshold_kind"] == "a_posteriori"
        assert (row["threshold"], row["accuracy"], row["f1"], row["recall"], row["precision"]) == pytest.approx(
            (threshold, accuracy, f1, recall, precision)
        )


def test_it_writes_every_table_and_figure(scored_campaign, tmp_path):
    campaign, _, _ = scored_campaign
    call_command("report", campaign.slug, "--label-source", "gold", "--out", str(tmp_path))
    names = {path.name for path in tmp_path.iterdir()}
    expected = {
        "table1.csv",
        "table2.csv",
        "table3.csv",
        "table4.csv",
        "eer.csv",
        "labels.csv",
        "agreement.csv",
        "auc.csv",
        "figure2.png",
        "thresholds_global.png",
        "ranks_mrpc.png",
        "signatures.csv",
        "notes.txt",
    }
    assert expected <= names
    signatures = pd.read_csv(tmp_path / "signatures.csv").set_index("metric")
    assert signatures.loc["lev", "direction"] == "lower" and signatures.loc["bleu", "signature"].startswith(
        "metric:bleu"
    )


def test_it_names_a_missing_campaign(db, tmp_path):
    with pytest.raises(CommandError, match="no campaign with slug nowhere"):
        call_command("report", "nowhere", "--out", str(tmp_path))


def test_it_refuses_a_campaign_without_pairs(campaign, tmp_path):
    with pytest.raises(CommandError, match="no pairs to report on"):
        call_command("report", campaign.slug, "--out", str(tmp_path))
