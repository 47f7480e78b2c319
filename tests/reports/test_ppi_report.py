"""The estimates table on the report page of every task type, equal to the analysis computed here by hand."""

import numpy as np
import pandas as pd
import pytest
from django.test import Client
from django.urls import reverse
from lxml import html as lxml_html

from campaigns.importers import import_pairs
from campaigns.models import Campaign, Score
from reports.analysis import ppi
from tests.factories import without_controls
from tests.toys import every_task_type

pytestmark = pytest.mark.report

METRIC = "lev"  # a distance: the analysis must orient it


def _campaign(researcher, task_type, n=80, labelled=40, seed=5):
    """`n` pairs of two systems, a gold label on the first `labelled`, lev scores that follow the labels."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.6
    lines = ["id,source,hypothesis,label,system"]
    for i in range(n):
        gold = str(int(truth[i])) if i < labelled else ""
        lines.append(f"p{i},Sentence number {i} is here.,Sentence {i} is there.,{gold},{'AB'[i % 2]}")
    campaign = Campaign.objects.create(slug=f"ppi-{task_type.replace('+', '-')}", name="PPI", task_type=task_type,
                                       created_by=researcher)  # fmt: skip
    without_controls(campaign)
    import_pairs(campaign, "\n".join(lines).encode(), filename="pairs.csv")
    scores = 10 - 4 * truth + rng.normal(0, 2, n)  # lower is closer
    for pair in campaign.real_pairs.order_by("pk"):
        index = int(pair.external_id[1:])
        Score.objects.create(pair=pair, metric=METRIC, signature="metric:lev|version:1", value=float(scores[index]))
    frame = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n)],
            "paraphrase": [float(truth[i]) if i < labelled else np.nan for i in range(n)],
            "system": ["AB"[i % 2] for i in range(n)],
            METRIC: scores,
        }
    )
    return campaign, frame


def _rows(document):
    rows = document.xpath('//div[@id="table-estimates"]//table/tbody/tr')
    return [[cell.text_content().strip() for cell in row.xpath("./th|./td")] for row in rows]


@every_task_type
def test_the_estimates_on_the_page_are_the_analysis_of_the_same_pairs(researcher, task_type):
    campaign, frame = _campaign(researcher, task_type)
    client = Client()
    client.force_login(researcher)
    page = client.get(reverse("reports-show-report", args=[campaign.slug]) + "?label=gold")
    assert page.status_code == 200
    rows = _rows(lxml_html.fromstring(page.content.decode()))
    expected, _notes = ppi.estimates_table(frame, [METRIC], {METRIC: "lower"}, seed=2024)
    assert [row[0] for row in rows] == ["All pairs", "A", "B", "A − B (difference)"]
    for row, (_index, want) in zip(rows, expected.iterrows(), strict=True):
        assert row[2] == str(want["n_labelled"])
        assert row[3] == f"{want['human']:.2f} [{want['human_low']:.2f}, {want['human_high']:.2f}]"
        assert row[4] == f"{want['ppi']:.2f} [{want['ppi_low']:.2f}, {want['ppi_high']:.2f}]"
    assert expected.iloc[0]["ppi_high"] - expected.iloc[0]["ppi_low"] < (
        expected.iloc[0]["human_high"] - expected.iloc[0]["human_low"]
    )  # the fixture's metric is good: the interval narrows
    csv = client.get(reverse("reports-download-report-table", args=["estimates"]) + f"?c={campaign.slug}&label=gold")
    assert csv.status_code == 200 and b"n_effective" in csv.content


def test_the_panel_names_its_columns_by_the_label_source_and_says_what_to_conclude(researcher):
    campaign, frame = _campaign(researcher, "similarity")
    client = Client()
    client.force_login(researcher)
    page = lxml_html.fromstring(
        client.get(reverse("reports-show-report", args=[campaign.slug]) + "?label=gold").content
    )
    headers = [th.text_content().strip() for th in page.xpath('//div[@id="table-estimates"]//table/thead//th')]
    assert "Gold [95% CI]" in headers and not any("Judges only" in h for h in headers)
    text = " ".join(page.xpath('//div[@id="table-estimates"]')[0].itertext())
    expected, _notes = ppi.estimates_table(frame, [METRIC], {METRIC: "lower"}, seed=2024)
    first = expected.iloc[0]
    narrower = 1 - (first["ppi_high"] - first["ppi_low"]) / (first["human_high"] - first["human_low"])
    assert f"The prediction-powered interval is {narrower:.0%} narrower than the gold one" in text
    assert f"count as {first['n_effective']:,.0f} uniformly drawn ones" in text
    assert "The predictor has scored 80 of 80 pairs" in text


def _row(**values):
    row = {"chosen_by": ppi.CHOSEN, "design": "uniform", "n_scored": 8, "n_total": 60, "n_labelled": 40}
    return pd.Series(row | values)


def test_the_conclusion_says_the_metric_adds_nothing_when_lambda_is_zero():
    from reports.analysis.present.layouts import estimates_conclusion

    row = _row(human=0.5, human_low=0.4, human_high=0.6, ppi=0.5, ppi_low=0.4, ppi_high=0.6, n_effective=40, **{
        "lambda": 0.0})  # fmt: skip
    words = estimates_conclusion(row)
    assert "the metric adds nothing here" in words.lower() and "lambda is 0.00" in words
    assert "The predictor has scored 8 of 60 pairs." in words


def test_the_conclusion_says_how_much_narrower_and_what_that_is_worth():
    from reports.analysis.present.layouts import estimates_conclusion

    row = _row(human=0.5, human_low=0.4, human_high=0.6, ppi=0.5, ppi_low=0.42, ppi_high=0.58, n_effective=62.5,
               **{"lambda": 0.7})  # fmt: skip
    words = estimates_conclusion(row)
    assert "20% narrower than the judges only one" in words
    assert "count as 62 uniformly drawn ones, worth 22 more labelled pairs drawn uniformly" in words
