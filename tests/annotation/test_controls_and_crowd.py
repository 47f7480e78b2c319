"""Hidden control items, judge exclusion, crowd-platform links and the closing questionnaire."""

import random

import pytest
from django.urls import reverse

from annotation import assignment as assign
from annotation.controls import ensure_control_pairs, plan_control_positions, protocol_of
from annotation.joining import join
from annotation.models import Judge, Judgment
from reports.exports import pairs_frame
from tests.factories import add_pairs, make_judge, remember


@pytest.fixture
def controlled(campaign):
    add_pairs(campaign, 30)
    campaign.pairs_per_judge = 9
    campaign.save()
    protocol = protocol_of(campaign)
    protocol.control_share = 0.25
    protocol.save()
    return campaign


def walk(judge, label="same_meaning"):
    sequence = []
    while (current := assign.next_assignment(judge)) is not None:
        assign.record_judgment(current, {"answer": label}, 2000)
        sequence.append(current)
    return sequence


def test_it_builds_identical_and_unrelated_controls_from_the_campaign(controlled):
    created = ensure_control_pairs(controlled, seed=1)
    controls = list(controlled.control_pairs)
    assert created == len(controls) >= 6
    identical = [c for c in controls if c.metadata["control"] == "identical"]
    unrelated = [c for c in controls if c.metadata["control"] == "unrelated"]
    assert identical and all(c.source == c.hypothesis and c.gold_label == 1 for c in identical)
    assert unrelated and all(c.source != c.hypothesis and c.gold_label == 0 for c in unrelated)
    assert ensure_control_pairs(controlled) == 0  # built once
    assert controlled.real_pairs.count() == 30  # controls are not real pairs


def test_control_positions_are_random_and_never_last(controlled):
    ensure_control_pairs(controlled)
    plans = {tuple(plan_control_positions(controlled, random.Random(seed))) for seed in range(30)}
    assert len(plans) > 5
    length = controlled.pairs_per_judge + 3
    assert all(len(plan) == 3 and max(plan) < length for plan in plans)


def test_a_judge_sees_controls_once_each_among_real_pairs_and_they_leave_no_trace_in_results(controlled):
    judge = join(controlled, key="k", crowd={})
    sequence = walk(judge)
    real_phase = [a for a in sequence if not a.is_training]
    controls = [a for a in real_phase if a.pair.is_control]
    assert len(controls) == len(judge.control_positions) == 3
    assert len({a.pair_id for a in controls}) == 3
    assert [real_phase.index(a) + 1 for a in controls] == judge.control_positions
    assert real_phase[-1].pair.is_control is False
    assert sum(1 for a in real_phase if not a.pair.is_control) == 9
    frame = pairs_frame(controlled)
    assert len(frame) == 30 and frame["n_judgments"].sum() == 9
    assert not frame["pair_id"].str.startswith("control").any()


def test_excluded_judges_leave_the_pairs_export_but_can_be_shown(campaign):
    add_pairs(campaign, 2)
    good, bad = make_judge(campaign), make_judge(campaign)
    walk(good, "same_meaning")
    walk(bad, "very_different")
    bad.excluded = True
    bad.save()
    assert pairs_frame(campaign)["n_very_different"].sum() == 0
    assert pairs_frame(campaign, include_excluded=True)["n_very_different"].sum() == 2


def test_the_researcher_excludes_a_flagged_judge_from_the_dashboard(client, researcher, controlled):
    judge = join(controlled, key="k", crowd={})
    walk(judge, "dont_know")  # fails every control, whatever its kind
    client.force_login(researcher)
    page = client.get(reverse("annotation-show-campaign", args=[controlled.slug])).content.decode()
    assert judge.pseudonym in page and "⚑" in page
    client.post(reverse("annotation-toggle-judge-exclusion", args=[controlled.slug, judge.pk]))
    judge.refresh_from_db()
    assert judge.excluded


def test_an_outsider_cannot_exclude_judges(client, outsider, campaign):
    judge = make_judge(campaign)
    remember(client, judge)
    client.force_login(outsider)
    response = client.post(reverse("annotation-toggle-judge-exclusion", args=[campaign.slug, judge.pk]))
    assert response.status_code == 302 and "/accounts/login/" in response.url
    judge.refresh_from_db()
    assert not judge.excluded


def test_a_prolific_link_stores_the_ids_and_never_hands_out_the_judge_again(client, controlled):
    url = reverse("annotation-show-welcome", args=[controlled.slug])
    link = f"{url}?PROLIFIC_PID=p123&STUDY_ID=s9&SESSION_ID=x1"
    page = client.get(link).content.decode()
    assert 'value="p123"' in page
    client.post(url, {"consent": "yes", "crowd_participant": "p123", "crowd_study": "s9", "crowd_session": "x1"})
    judge = Judge.objects.get()
    assert (judge.crowd_participant, judge.crowd_study, judge.crowd_session) == ("p123", "s9", "x1")
    assert client.get(link).url == reverse("annotation-show-item", args=[controlled.slug, Judge.path_token])
    client.cookies.clear()  # another browser with the same id: the consent page, never the judge
    response = client.get(link)
    assert response.status_code == 200 and judge.token not in response.content.decode()


def test_a_capped_campaign_turns_new_judges_away(client, controlled):
    protocol = protocol_of(controlled)
    protocol.max_judges = 1
    protocol.save()
    join(controlled, key="k", crowd={})
    response = client.get(reverse("annotation-show-welcome", args=[controlled.slug]))
    assert "all the judges it needs" in response.content.decode()


def test_the_end_asks_the_questionnaire_then_gives_the_completion_code(client, campaign):
    add_pairs(campaign, 1)
    protocol = protocol_of(campaign)
    protocol.control_share = 0
    protocol.questionnaire = "Was anything unclear?\nHow tired are you?"
    protocol.completion_code = "C0DE42"
    protocol.completion_url = "https://example.org/done"
    protocol.save()
    judge = make_judge(campaign)
    remember(client, judge)
    walk(judge)
    thanks = reverse("annotation-show-thanks", args=[campaign.slug, judge.token])
    response = client.get(thanks)
    assert response.url == reverse("annotation-show-questionnaire", args=[campaign.slug, Judge.path_token])
    assert "How tired are you?" in client.get(response.url).content.decode()
    client.post(response.url, {"q0": "No", "q1": "A bit"})
    judge.refresh_from_db()
    assert judge.questionnaire_answers["How tired are you?"] == "A bit"
    page = client.get(thanks).content.decode()
    assert "C0DE42" in page and "url=https://example.org/done" in page


def test_controls_count_towards_the_progress_total(controlled):
    judge = join(controlled, key="k", crowd={})
    assert assign.judge_progress(judge)["real_total"] == 12
    assert Judgment.objects.count() == 0
