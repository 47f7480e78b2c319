"""The oracle table reaches `report --out` (oracle.csv) and the report page, from stored Score details."""

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse

from campaigns.models import Score
from tests.factories import add_pairs

# (gold label, verdict, accepted) per pair: 3 of 4 verdicts match the gold label.
CASES = [(1, "yes", True), (1, "yes", False), (0, "no", True), (0, "yes", False)]


@pytest.fixture
def checked_campaign(campaign):
    pairs = add_pairs(campaign, len(CASES))
    for pair, (gold, verdict, accepted) in zip(pairs, CASES):
        pair.gold_label = gold
        pair.save(update_fields=["gold_label"])
        sign = {"yes": 1, "no": -1}[verdict]
        details = {"answers": [verdict] * 3, "verdict": verdict, "consistency": 1.0, "accepted": accepted}
        Score.objects.create(
            pair=pair,
            metric="llm_checked",
            signature="metric:llm_checked|version:1",
            value=sign * accepted,
            details=details,
        )
    return campaign


def test_report_out_writes_oracle_csv(checked_campaign, tmp_path):
    call_command("report", checked_campaign.slug, "--label-source", "gold", "--out", str(tmp_path), "--no-figures")
    table = pd.read_csv(tmp_path / "oracle.csv", keep_default_na=False)
    agreement = table[(table["metric"] == "llm_checked") & (table["part"] == "agreement")].iloc[0]
    assert (agreement["count"], agreement["n"]) == (3, 4)
    accuracy = table[table["part"] == "accuracy_by_acceptance"].set_index("group")
    assert (accuracy.loc["accepted", "count"], accuracy.loc["accepted", "n"]) == (2, 2)
    assert (accuracy.loc["rejected", "count"], accuracy.loc["rejected", "n"]) == (1, 2)


def test_the_report_page_shows_the_oracle_table(client, checked_campaign, researcher):
    client.force_login(researcher)
    response = client.get(reverse("reports-show-report", args=[checked_campaign.slug]) + "?label=gold")
    body = response.content.decode()
    assert response.status_code == 200
    assert "LLM oracle" in body and "near chance" in body
    assert "Verdict = label, accepted vs rejected" in body and "2 / 2" in body
