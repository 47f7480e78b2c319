"""The span-tagging report of a campaign: tables from the database, `report --out` files and the page."""

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse
from seqeval.metrics import f1_score as seqeval_f1
from sklearn.metrics import cohen_kappa_score

from annotation import assignment as assign
from campaigns.importers import import_pairs
from campaigns.models import Score
from tests.factories import make_judge, without_controls

CORPUS = (
    b'{"id": "a", "corpus": "X", "source": "The red car stopped.", "hypothesis": "The car stopped suddenly."}\n'
    b'{"id": "b", "corpus": "X", "source": "Anna wrote the letter.", "hypothesis": "The letter was written by Anna."}\n'
    b'{"id": "c", "corpus": "Y", "source": "He sold his old bike.", "hypothesis": "He sold his new car."}\n'
)
# Known taggings of two judges: (source indexes, hypothesis indexes) per pair.
TAGGINGS = {
    "first": {"a": ([1], [3]), "b": ([], []), "c": ([3, 4], [3, 4])},
    "second": {"a": ([1], []), "b": ([0], []), "c": ([4], [4])},
}


@pytest.fixture
def tagged_campaign(campaign):
    campaign.task_type = "spans"
    campaign.save()
    import_pairs(campaign, CORPUS)
    without_controls(campaign)
    for taggings in TAGGINGS.values():
        judge = make_judge(campaign)
        for position, (pair_id, (source, hypothesis)) in enumerate(taggings.items(), start=1):
            pair = campaign.pairs.get(external_id=pair_id)
            assignment = judge.assignments.create(pair=pair, position=position, top="source")
            assign.record_judgment(assignment, {"source": source, "hypothesis": hypothesis})
    for value, pair in zip([30.0, 90.0, 20.0], campaign.real_pairs.order_by("external_id"), strict=True):
        Score.objects.create(pair=pair, metric="bleu", signature="sig", value=value)
    return campaign


def independent_tags(campaign, judge):
    """The judge's word tags concatenated pair by pair (a then b then c), source then hypothesis."""
    sequences = []
    for pair_id in "abc":
        pair = campaign.pairs.get(external_id=pair_id)
        for side, indexes in zip(("source", "hypothesis"), TAGGINGS[judge][pair_id], strict=True):
            sequences.append(["B-GAP" if i in indexes else "O" for i in range(len(pair.words(side)))])
    return sequences


def fix_bio(sequence):
    """Runs of tagged words become B- then I- labels."""
    return [
        ("I" if i and sequence[i - 1] != "O" else "B") + "-GAP" if tag != "O" else "O" for i, tag in enumerate(sequence)
    ]


def test_report_out_writes_agreement_and_degree_matching_an_independent_computation(tagged_campaign, tmp_path):
    call_command("report", tagged_campaign.slug, "--out", str(tmp_path), "--no-figures")
    agreement = pd.read_csv(tmp_path / "span_agreement.csv")
    first, second = independent_tags(tagged_campaign, "first"), independent_tags(tagged_campaign, "second")
    flat = [[int(tag != "O") for sequence in judge for tag in sequence] for judge in (first, second)]
    overall = agreement[agreement["judge"] == "all"].iloc[0]
    assert overall["kappa"] == pytest.approx(cohen_kappa_score(*flat))
    expected_f1 = seqeval_f1([fix_bio(s) for s in first], [fix_bio(s) for s in second])
    assert overall["span_f1"] == pytest.approx(expected_f1)
    degree = pd.read_csv(tmp_path / "span_degree.csv").set_index("pair_id")
    # Majority over two judges: a word is tagged when both tagged it.
    assert degree.loc["a", "tagged_share"] == pytest.approx(1 / 10)
    assert degree.loc["b", "tagged_share"] == 0
    assert degree.loc["c", "tagged_share"] == pytest.approx(2 / 12)
    correlation = pd.read_csv(tmp_path / "span_correlation.csv").set_index("against")
    assert correlation.loc["bleu", "n_pairs"] == 3
    by_corpus = pd.read_csv(tmp_path / "span_degree_by_corpus.csv").set_index("corpus")
    assert by_corpus.loc["Y", "mean_tagged_share"] == pytest.approx(2 / 12)


def test_the_report_page_shows_the_span_section(tagged_campaign, client, researcher):
    client.force_login(researcher)
    page = client.get(reverse("reports-show-report", args=[tagged_campaign.slug])).content.decode()
    assert "Span agreement (ParaTag)" in page
    assert "Degree of paraphrase (share of tagged words) by corpus" in page
    # Span tables download like every other table: CSV, CSV with notes and LaTeX.
    csv_url = reverse("reports-download-report-table", args=["span_agreement"]) + f"?c={tagged_campaign.slug}"
    assert csv_url in page
    table = client.get(csv_url + "&label=human").content.decode()
    assert table.startswith("judge,n_judge_pairs,n_words,kappa,span_f1,word_accuracy")
    tex = client.get(reverse("reports-download-report-latex", args=["span_agreement"]) + f"?c={tagged_campaign.slug}")
    assert tex.status_code == 200 and "\\begin{tabular}" in tex.content.decode()
    old_url = reverse("reports-download-task-table", args=[tagged_campaign.slug, "span_agreement"])
    assert client.get(old_url).content.decode() == table
    assert client.get(reverse("reports-download-task-table", args=[tagged_campaign.slug, "nope"])).status_code == 404


def test_a_pre_tagged_corpus_is_analysed_without_judges(campaign, tmp_path):
    campaign.task_type = "spans"
    campaign.save()
    import_pairs(
        campaign,
        b'{"id": "g", "source": "A b c.", "hypothesis": "A b d.", "source_tags": [0, 0, 1, 0], '
        b'"hypothesis_tags": [0, 0, 1, 0]}\n',
    )
    call_command("report", campaign.slug, "--out", str(tmp_path), "--no-figures")
    degree = pd.read_csv(tmp_path / "span_degree.csv")
    assert degree["tagged_share"].tolist() == [pytest.approx(2 / 8)]


def test_the_researcher_pages_of_a_tagged_campaign_open(tagged_campaign, client, researcher):
    client.force_login(researcher)
    for name in ("annotation-show-campaign", "reports-export-pairs", "reports-export-judgments"):
        response = client.get(reverse(name, args=[tagged_campaign.slug]))
        assert response.status_code == 200, name
    dashboard = client.get(reverse("annotation-show-campaign", args=[tagged_campaign.slug]))
    assert b"Download span taggings" in dashboard.content


def test_the_degree_is_correlated_with_the_5_way_answers_when_judges_gave_both(campaign, tmp_path):
    campaign.task_type = "similarity+spans"
    campaign.save()
    import_pairs(campaign, CORPUS)
    without_controls(campaign)
    judge = make_judge(campaign)
    answers = {"a": ("mostly_similar", [1]), "b": ("same_meaning", []), "c": ("very_different", [3, 4])}
    for position, (pair_id, (label, source)) in enumerate(answers.items(), start=1):
        assignment = judge.assignments.create(pair=campaign.pairs.get(external_id=pair_id), position=position)
        assign.record_judgment(assignment, {"answer": label, "source": source, "hypothesis": []})
    call_command("report", campaign.slug, "--out", str(tmp_path), "--no-figures")
    correlation = pd.read_csv(tmp_path / "span_correlation.csv").set_index("against")
    row = correlation.loc["5-way answer (mean ordinal)"]
    # More tagged words, less similar answers: a perfect inverse ranking on these three pairs.
    assert row["n_pairs"] == 3 and row["spearman"] == pytest.approx(-1.0)


def test_the_span_tables_by_system_follow_the_campaigns_system_setting(campaign, tmp_path):
    campaign.task_type = "spans"
    campaign.system_keys = "model"
    campaign.save()
    import_pairs(
        campaign,
        b'{"id": "g", "source": "A b c.", "hypothesis": "A b d.", "model": "m1", '
        b'"source_tags": [0, 0, 1, 0], "hypothesis_tags": [0, 0, 1, 0]}\n'
        b'{"id": "h", "source": "E f g.", "hypothesis": "E f g h.", "model": "m2", '
        b'"source_tags": [0, 0, 0, 0], "hypothesis_tags": [0, 0, 0, 0, 0]}\n'
        b'{"id": "i", "source": "I j k.", "hypothesis": "I j l.", '
        b'"source_tags": [0, 0, 0, 0], "hypothesis_tags": [0, 0, 0, 0]}\n',
    )
    call_command("report", campaign.slug, "--out", str(tmp_path), "--no-figures")
    by_system = pd.read_csv(tmp_path / "span_degree_by_system.csv").set_index("system")
    assert by_system["n_pairs"].to_dict() == {"(no system)": 1, "m1": 1, "m2": 1, "all": 3}
    assert by_system.loc["m1", "mean_tagged_share"] == pytest.approx(2 / 8)
    # Section 5.3's subset: at most 5% of the words tagged (h and i tag none).
    assert by_system.loc["all", "n_within_theta"] == 2
    assert set(pd.read_csv(tmp_path / "span_degree.csv")["system"]) == {"m1", "m2", "(no system)"}
