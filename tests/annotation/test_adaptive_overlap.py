"""Adaptive overlap with simulated judges: agreeing pairs stop early, disputed ones reach the maximum."""

import random

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotation import assignment as assign
from annotation.joining import join
from annotation.models import Judgment
from annotation.stats import campaign_progress
from annotation.tasktypes.similarity.tasktype import Similarity
from campaigns.models import Campaign
from reports.frames import load_frames
from tests.factories import add_pairs, make_judge, without_controls

pytestmark = pytest.mark.django_db

# What simulated judges answer on each kind of pair.
CLEAR_YES = ["same_meaning", "mostly_similar"]
CLEAR_NO = ["very_different", "slightly_similar"]


def answer_for(assignment, rng):
    """Pairs 1-10 are clear paraphrases, 11-20 clear non-paraphrases; 21-30 split their judges in turn."""
    pair_number = int(assignment.pair.external_id[1:])
    if pair_number <= 10:
        return rng.choice(CLEAR_YES)
    if pair_number <= 20:
        return rng.choice(CLEAR_NO)
    earlier = Judgment.objects.filter(pair=assignment.pair).count()
    return rng.choice(CLEAR_YES if earlier % 2 else CLEAR_NO)


def run_judges(campaign, judges):
    rng = random.Random(7)
    for number in range(judges):
        judge = join(campaign, key=f"k{number}", crowd={})
        if judge is None:
            return number
        while (current := assign.next_assignment(judge)) is not None:
            assign.record_judgment(
                current, {"answer": "dont_know" if current.is_training else answer_for(current, rng)}
            )
    return judges


@pytest.fixture
def adaptive(campaign):
    add_pairs(campaign, 30)
    campaign.adaptive_overlap = True
    campaign.overlap_target = 2
    campaign.overlap_max = 5
    campaign.pairs_per_judge = 10
    campaign.save()
    return without_controls(campaign)


def per_pair(campaign):
    counts = {n: 0 for n in range(1, 31)}
    for external_id in (
        Judgment.objects.counted().filter(pair__campaign=campaign).values_list("pair__external_id", flat=True)
    ):
        counts[int(external_id[1:])] += 1
    return counts


def test_agreeing_pairs_stop_at_two_and_disputed_pairs_reach_five(adaptive):
    joined = run_judges(adaptive, judges=40)
    counts = per_pair(adaptive)
    assert all(counts[n] == 2 for n in range(1, 21)), counts
    assert all(counts[n] == 5 for n in range(21, 31)), counts
    # 80 judgments instead of 150 had every pair been asked five times.
    assert sum(counts.values()) == 20 * 2 + 10 * 5
    assert joined < 40, "once every pair is settled, new judges are told nothing is left"


def test_the_dashboard_shows_the_judgments_saved(client, researcher, adaptive):
    run_judges(adaptive, judges=40)
    progress = campaign_progress(adaptive)
    assert progress["adaptive"] == {"n_pairs": 20, "n_saved": 20 * (5 - 2)}
    client.force_login(researcher)
    page = client.get(reverse("annotation-show-campaign", args=[adaptive.slug])).content.decode()
    assert "60" in page and "judgments saved by adaptive overlap" in page


def test_a_dont_know_is_no_agreement(adaptive):
    pair = adaptive.real_pairs.get(external_id="p1")
    for label in ["same_meaning", "dont_know"]:
        assignment = make_judge(adaptive).assignments.create(pair=pair, position=1, top="source")
        assign.record_judgment(assignment, {"answer": label})
    assert assign.open_pairs(adaptive).filter(pk=pair.pk).exists()
    assert not assign.settled_early(adaptive).filter(pk=pair.pk).exists()


def test_a_task_type_without_a_binary_outcome_keeps_the_fixed_overlap(adaptive, monkeypatch):
    monkeypatch.setattr(Similarity, "vote", None)
    pair = adaptive.real_pairs.get(external_id="p1")
    for label in ["same_meaning", "very_different"]:  # a disagreement that adaptive overlap would reopen
        assignment = make_judge(adaptive).assignments.create(pair=pair, position=1, top="source")
        assign.record_judgment(assignment, {"answer": label})
    assert not assign.open_pairs(adaptive).filter(pk=pair.pk).exists()
    monkeypatch.undo()
    assert assign.open_pairs(adaptive).filter(pk=pair.pk).exists()


def test_fixed_overlap_is_the_default_and_unchanged(campaign):
    add_pairs(campaign, 30)
    campaign.overlap_target = 2
    campaign.pairs_per_judge = 10
    campaign.save()
    without_controls(campaign)
    assert campaign.adaptive_overlap is False
    run_judges(campaign, judges=40)
    assert set(per_pair(campaign).values()) == {2}
    assert campaign_progress(campaign)["adaptive"] is None


def test_the_report_notes_the_rule(adaptive):
    notes = load_frames([adaptive]).notes
    assert any("adaptive overlap" in note and "up to 5" in note for note in notes)


def test_the_maximum_cannot_be_below_the_first_judges(campaign):
    campaign.adaptive_overlap = True
    campaign.overlap_target = 3
    campaign.overlap_max = 2
    with pytest.raises(ValidationError, match="maximum"):
        campaign.full_clean()


def test_a_researcher_turns_adaptive_overlap_on_in_the_campaign_form(client, researcher):
    client.force_login(researcher)
    form = {"name": "Pilot", "pairs_per_judge": 10, "overlap_target": 2, "is_open": "on", "adaptive_overlap": "on"}
    response = client.post(reverse("campaigns-create-campaign"), form | {"slug": "low", "overlap_max": 1})
    assert "cannot be below" in response.content.decode()
    assert not Campaign.objects.filter(slug="low").exists()
    client.post(reverse("campaigns-create-campaign"), form | {"slug": "pilot", "overlap_max": 4})
    campaign = Campaign.objects.get(slug="pilot")
    assert campaign.adaptive_overlap and campaign.overlap_max == 4


def test_the_api_sets_adaptive_overlap_and_refuses_a_maximum_below_the_first_judges(researcher):
    from rest_framework.test import APIClient

    researcher.is_superuser = True
    researcher.save()
    api = APIClient()
    api.force_authenticate(researcher)
    body = {"slug": "api", "name": "API", "overlap_target": 3, "adaptive_overlap": True, "overlap_max": 2}
    response = api.post("/api/campaigns/", body, format="json")
    assert response.status_code == 409 and "overlap_max" in response.json()  # two values that clash
    response = api.post("/api/campaigns/", body | {"overlap_max": 6}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["adaptive_overlap"] is True and Campaign.objects.get(slug="api").overlap_max == 6
    response = api.patch("/api/campaigns/api/", {"overlap_max": 1}, format="json")
    assert response.status_code == 409
