"""The criteria task type (PEM): creation, answers in Judgment.values, exports, controls, report section."""

import io

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation import assignment as assign
from annotation.controls import ensure_control_pairs, protocol_of
from annotation.models import Judgment
from annotation.reliability import campaign_reliability
from annotation.tasktypes.criteria.scale import control_passed
from campaigns.models import Campaign
from reports.exports import judgments_frame, pairs_frame
from tests.factories import make_judge, remember, show_next

RATINGS = {"adequacy": 4, "fluency": 5, "dissimilarity": 2, "overall": 3}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


@pytest.fixture
def criteria_campaign(db, tmp_path):
    path = tmp_path / "pairs.csv"
    rows = [f"p{i},Source sentence {i}.,Hypothesis {i} here.,{'sys' + str(i % 4)}" for i in range(1, 9)]
    path.write_text("id,source,hypothesis,system\n" + "\n".join(rows) + "\n", encoding="utf-8")
    call_command("import_pairs", "pem", str(path), "--create", "--task", "criteria", stdout=io.StringIO())
    return Campaign.objects.get(slug="pem")


def post_answer(client, judge, assignment, ratings):
    url = reverse("annotation-record-answer", args=[judge.campaign.slug, judge.token])
    return client.post(url, {"assignment": assignment.pk, "response_ms": 1200, **ratings})


def test_import_pairs_creates_a_criteria_campaign_with_its_own_training(criteria_campaign):
    assert criteria_campaign.task_type == "criteria"
    assert criteria_campaign.training_pairs.count() == 5
    assert criteria_campaign.training_pairs.first().gold_label is None


def test_import_pairs_refuses_another_task_for_an_existing_campaign(criteria_campaign, tmp_path):
    path = tmp_path / "more.csv"
    path.write_text("source,hypothesis\nA.,B.\n", encoding="utf-8")
    with pytest.raises(CommandError, match="already exists with task type 'criteria'"):
        call_command("import_pairs", "pem", str(path), "--task", "similarity")


def test_a_judge_answer_is_stored_as_four_ratings_and_exported(client, criteria_campaign):
    judge = make_judge(criteria_campaign)
    current = show_next(client, judge)

    response = post_answer(client, judge, current, RATINGS)

    # A training answer: the expected ranges and the why come back before the next pair.
    assert response.status_code == 200 and "Training: the expected answer and yours" in response.content.decode()
    judgment = Judgment.objects.get(assignment=current)
    assert judgment.values == RATINGS
    row = judgments_frame(criteria_campaign).iloc[0]
    assert [row[name] for name in RATINGS] == list(RATINGS.values())


def test_an_incomplete_rating_is_refused_with_a_message(client, criteria_campaign):
    judge = make_judge(criteria_campaign)
    current = show_next(client, judge)

    response = post_answer(client, judge, current, {"adequacy": 4, "fluency": 6})

    assert response.status_code == 400 and "Rate all four criteria" in response.content.decode()
    assert not Judgment.objects.exists()


def test_the_pairs_csv_has_each_criterions_mean_and_counts(criteria_campaign):
    pair = criteria_campaign.real_pairs.get(external_id="p1")
    for overall in (2, 4):
        judge = make_judge(criteria_campaign)
        assignment = judge.assignments.create(pair=pair, position=10, top="source")
        assign.record_judgment(assignment, {**RATINGS, "overall": overall}, 900)

    row = pairs_frame(criteria_campaign).set_index("pair_id").loc["p1"]

    assert row["n_judgments"] == 2 and row["overall_mean"] == 3.0 and row["adequacy_mean"] == 4.0
    assert (row["n_overall_2"], row["n_overall_4"], row["n_overall_3"]) == (1, 1, 0)


def test_controls_are_the_source_as_hypothesis_and_count_in_reliability(criteria_campaign):
    protocol = protocol_of(criteria_campaign)
    protocol.control_share = 0.2
    protocol.save()
    ensure_control_pairs(criteria_campaign, seed=1)
    controls = list(criteria_campaign.control_pairs)
    assert controls and all(c.source == c.hypothesis for c in controls)
    judge = make_judge(criteria_campaign)
    good = {"adequacy": 5, "fluency": 4, "dissimilarity": 1, "overall": 2}
    bad = {"adequacy": 2, "fluency": 5, "dissimilarity": 5, "overall": 2}
    for position, (control, ratings) in enumerate(zip(controls[:2], [good, bad]), start=20):
        assign.record_judgment(judge.assignments.create(pair=control, position=position, top="source"), ratings, 900)

    row = campaign_reliability(criteria_campaign).iloc[0]

    assert row["n_controls"] == 2 and row["control_pass_rate"] == 0.5
    assert control_passed(good) and not control_passed(bad)


def test_the_task_type_is_fixed_once_a_judge_has_started(client, criteria_campaign, researcher):
    criteria_campaign.created_by = researcher
    criteria_campaign.save()
    assign.next_assignment(make_judge(criteria_campaign))
    client.force_login(researcher)

    response = client.patch(
        f"/api/campaigns/{criteria_campaign.slug}/", {"task_type": "similarity"}, content_type="application/json"
    )

    assert response.status_code == 409 and "can no longer change" in response.content.decode()
    assert Campaign.objects.get(pk=criteria_campaign.pk).task_type == "criteria"


def test_the_report_page_shows_pems_tables(client, criteria_campaign, researcher):
    criteria_campaign.created_by = researcher
    criteria_campaign.save()
    pairs = list(criteria_campaign.real_pairs)
    for offset in range(3):
        judge = make_judge(criteria_campaign)
        for position, pair in enumerate(pairs, start=10):
            rating = 1 + (position + offset) % 5
            ratings = {"adequacy": rating, "fluency": 5, "dissimilarity": 2, "overall": rating}
            assign.record_judgment(judge.assignments.create(pair=pair, position=position, top="source"), ratings, 900)
    client.force_login(researcher)

    body = client.get(reverse("reports-show-report", args=["pem"])).content.decode()

    for title in (
        "PEM Table 1",
        "PEM Table 2",
        "Krippendorff",
        "fit: SVR from the metric scores",
        "Each criterion by system",
    ):
        assert title in body


def rate_every_pair_twice(campaign):
    """Two judges rate every real pair: adequacy and overall vary with the position, fluency and dissimilarity not."""
    pairs = list(campaign.real_pairs)
    for offset in range(2):
        judge = make_judge(campaign)
        for position, pair in enumerate(pairs, start=10):
            rating = 1 + (position + offset) % 5
            ratings = {"adequacy": rating, "fluency": 4, "dissimilarity": 2, "overall": rating}
            assign.record_judgment(judge.assignments.create(pair=pair, position=position, top="source"), ratings, 900)


def test_report_out_writes_pems_tables_for_a_criteria_campaign(criteria_campaign, tmp_path):
    rate_every_pair_twice(criteria_campaign)

    call_command("report", "pem", "--out", str(tmp_path), "--no-figures", stdout=io.StringIO(), stderr=io.StringIO())

    by_system = (tmp_path / "criteria_by_system.csv").read_text(encoding="utf-8").splitlines()
    assert by_system[0] == "system,criterion,n,mean,std,ci_low,ci_high"
    assert any(line.startswith("sys1,fluency,4,4.0,") for line in by_system)
    assert (tmp_path / "criteria_alpha.csv").exists() and (tmp_path / "criteria_vs_overall.csv").exists()


def test_an_unrated_criteria_campaign_lists_its_sections_each_with_its_reason(client, criteria_campaign, researcher):
    criteria_campaign.created_by = researcher
    criteria_campaign.save()
    client.force_login(researcher)

    body = client.get(reverse("reports-show-report", args=["pem"])).content.decode()

    # The contents list links the criteria and systems sections; the similarity sections are not this task's.
    assert 'href="#report-criteria"' in body and 'href="#report-systems"' in body
    assert 'href="#report-corpora"' not in body
    assert "No ratings yet: PEM&#x27;s tables appear once judges have rated pairs on the criteria." in body


def test_report_latex_writes_pems_and_the_systems_tables(criteria_campaign, tmp_path):
    rate_every_pair_twice(criteria_campaign)

    call_command(
        "report",
        "pem",
        "--out",
        str(tmp_path),
        "--no-figures",
        "--latex",
        "--html",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )

    tex = (tmp_path / "criteria_by_system.tex").read_text(encoding="utf-8")
    assert "\\toprule" in tex and "sys1" in tex
    assert (tmp_path / "systems.tex").exists() and (tmp_path / "criteria_alpha.tex").exists()
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Each criterion by system" in page and "<h2>Systems</h2>" in page


def test_a_french_judge_reads_the_criteria_and_their_examples_in_french(client, criteria_campaign):
    judge = make_judge(criteria_campaign)
    remember(client, judge)
    url = reverse("annotation-show-item", args=[criteria_campaign.slug, judge.token])

    html = client.get(url, HTTP_ACCEPT_LANGUAGE="fr").content.decode()

    assert "Adéquation : quelle part du sens de l’original la paraphrase garde-t-elle ?" in html
    assert "Le sens survit, mais personne" in html and "Fluidité : 2" in html
    assert "mots entièrement nouveaux" in html


def test_the_welcome_page_says_what_a_criteria_judge_will_do(client, criteria_campaign):
    url = reverse("annotation-show-welcome", args=[criteria_campaign.slug])

    english = client.get(url).content.decode()
    french = client.get(url, HTTP_ACCEPT_LANGUAGE="fr").content.decode()

    assert "rate the paraphrase on four criteria" in english and "how close their meanings are" not in english
    assert "noterez la paraphrase sur quatre critères" in french
