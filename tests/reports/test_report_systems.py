"""The Systems section: system keys, systems.csv and system_correlation.csv, the page, checked with scipy."""

import csv

import numpy as np
import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse
from scipy import stats

from campaigns.importers import import_pairs
from campaigns.models import Campaign, Pair, Score
from reports.exports import judgments_frame
from reports.frames import load_frames

# Five systems paraphrase the same six sources; gold labels rank them A > B > C > D > E.
GOLD = {
    "A": [1, 1, 1, 1, 1, 0],
    "B": [1, 1, 1, 0, 1, 0],
    "C": [1, 0, 0, 1, 0, 1],
    "D": [0, 0, 1, 0, 1, 0],
    "E": [0, 0, 0, 0, 1, 0],
}
BLEU = {"A": 0.8, "B": 0.5, "C": 0.6, "D": 0.3, "E": 0.1}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


@pytest.fixture
def systems_campaign(campaign):
    lines = ["id,source,hypothesis,label,system,run"]
    for system, labels in GOLD.items():
        for index, label in enumerate(labels):
            lines.append(f"{system}{index},Source {index}.,Hypothesis {system} {index}.,{label},{system},r{index % 2}")
    import_pairs(campaign, "\n".join(lines).encode(), filename="systems.csv")
    for pair in campaign.real_pairs:
        system, index = pair.external_id[0], int(pair.external_id[1:])
        value = BLEU[system] + 0.01 * index
        Score.objects.create(pair=pair, metric="bleu", signature="metric:bleu|version:1", value=value)
    return campaign


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def system_means():
    rates = {system: np.mean(labels) for system, labels in GOLD.items()}
    bleu = {system: np.mean([BLEU[system] + 0.01 * i for i in range(6)]) for system in GOLD}
    return rates, bleu


def test_report_writes_the_systems_files_matching_scipy_with_gold_labels(systems_campaign, tmp_path):
    call_command("report", "demo", "--label-source", "gold", "--out", str(tmp_path), "--no-figures")

    rates, bleu = system_means()
    systems = {row["system"]: row for row in read(tmp_path / "systems.csv")}
    assert list(systems) == ["A", "B", "C", "D", "E"]
    for system, rate in rates.items():
        assert float(systems[system]["paraphrase_rate"]) == pytest.approx(rate)
        assert float(systems[system]["bleu"]) == pytest.approx(bleu[system])
        assert float(systems[system]["ci_low"]) <= rate <= float(systems[system]["ci_high"])
    (row,) = read(tmp_path / "system_correlation.csv")
    x, y = [rates[s] for s in GOLD], [bleu[s] for s in GOLD]
    assert float(row["pearson"]) == pytest.approx(stats.pearsonr(x, y)[0])
    assert float(row["spearman"]) == pytest.approx(stats.spearmanr(x, y)[0])
    assert float(row["kendall"]) == pytest.approx(stats.kendalltau(x, y)[0])
    assert row["n_systems"] == "5" and row["meaningful"] == "True"
    pairwise = read(tmp_path / "system_pairwise.csv")
    assert len(pairwise) == 10
    a_vs_e = next(r for r in pairwise if (r["system_a"], r["system_b"]) == ("A", "E"))
    assert float(a_vs_e["p_sign"]) == pytest.approx(stats.binomtest(4, 4, 0.5).pvalue)


def test_the_system_keys_setting_picks_another_metadata_key(systems_campaign):
    systems_campaign.system_keys = "run"
    systems_campaign.save()

    pairs = load_frames([Campaign.objects.get(pk=systems_campaign.pk)]).pairs

    assert sorted(pairs["system"].unique()) == ["r0", "r1"]


def test_generated_pairs_default_to_generator_and_template(campaign):
    metadata = {"generator": "smollm2", "template": "naive", "candidate": 1}
    Pair.objects.create(campaign=campaign, external_id="g1", source="A.", hypothesis="B.", metadata=metadata)

    assert load_frames([campaign]).pairs["system"].tolist() == ["smollm2 / naive"]


def test_the_page_shows_the_systems_section_and_the_figure(client, systems_campaign, researcher):
    client.force_login(researcher)

    body = client.get(reverse("reports-show-report", args=["demo"]) + "?label=gold").content.decode()
    figure = client.get(reverse("reports-show-report-figure", args=["systems", "png"]) + "?c=demo&label=gold")

    assert "<h2>Systems</h2>" in body and "5 systems" in body
    assert "System-level correlation of each metric" in body and "Fewer than 4 systems" not in body
    assert figure.status_code == 200 and figure.content.startswith(b"\x89PNG")


def test_the_page_says_when_too_few_systems_make_correlations_meaningless(client, campaign, researcher):
    import_pairs(campaign, b"id,source,hypothesis,label,system\n1,A.,B.,1,x\n2,A.,C.,0,y\n", filename="f.csv")
    client.force_login(researcher)

    body = client.get(reverse("reports-show-report", args=["demo"]) + "?label=gold").content.decode()

    assert "Fewer than 4 systems" in body


def test_the_judgments_csv_names_each_pairs_system(systems_campaign):
    from annotation.models import Assignment, Judgment
    from tests.factories import make_judge

    judge = make_judge(systems_campaign)
    pair = systems_campaign.pairs.get(external_id="C2")
    assignment = Assignment.objects.create(judge=judge, pair=pair, position=1, top="source")
    Judgment.objects.create(assignment=assignment, judge=judge, pair=pair, values={"answer": "same_meaning"})

    assert judgments_frame(systems_campaign)["system"].tolist() == ["C"]
