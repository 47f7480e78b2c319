from datetime import timedelta

import pandas as pd
import pytest
from django.core.management import call_command

from reports.frames import latest_metric_scores
from scoring import service
from scoring.models import Score
from tests.factories import add_pairs


@pytest.fixture
def pairs(campaign):
    return add_pairs(campaign, 5)


def test_a_new_signature_rescores_without_mixing(pairs):
    ids = [pair.pk for pair in pairs]
    service.score_pairs("lev", ids)
    stale = Score.objects.filter(pair=pairs[0]).get()
    Score.objects.filter(pk=stale.pk).update(
        signature="metric:lev|version:0", created_at=stale.created_at - timedelta(days=1)
    )
    scores = latest_metric_scores([pairs[0].campaign])
    assert scores.signatures == {"lev": service.scorer("lev").signature_string()}
    by_pair = scores.wide["lev"]
    assert by_pair.get(pairs[0].pk) is None or by_pair.isna()[pairs[0].pk]
    assert by_pair.notna().sum() == 4
    assert "ignored metric:lev|version:0 (1 scores)" in scores.notes[0]


def test_the_export_gains_one_column_per_metric(pairs, tmp_path):
    service.score_inline([pair.pk for pair in pairs], ["lev", "bleu"])
    out = tmp_path / "pairs.csv"
    call_command("export_pairs", "demo", "--out", str(out))

    frame = pd.read_csv(out)
    assert list(frame.columns[-2:]) == ["lev", "bleu"]
    assert frame["lev"].notna().all()
    signatures = (tmp_path / "pairs.csv.signatures.txt").read_text()
    assert "lev\tmetric:lev" in signatures and "bleu\tmetric:bleu" in signatures
