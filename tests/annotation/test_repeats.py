"""Repeats (issue 48): a repeated answer answers like the first whatever its timing; a repeated crowd
participant id joins as a new judge, and the judges' table says how often that id joined."""

from django.template.loader import render_to_string
from django.urls import reverse

from annotation import assignment as assign
from annotation.models import Judgment
from annotation.reliability import campaign_reliability
from tests.factories import add_pairs, make_judge, remember, without_controls


def test_a_repeat_whose_first_was_stored_meanwhile_answers_like_the_first(client, campaign, monkeypatch):
    """The double click's second request read no judgment yet, then the first committed and moved the judge on:
    the repeat answers with the next pair, as the first did, not with a 409 saying nothing was stored."""
    add_pairs(campaign, 3)
    without_controls(campaign)
    judge = remember(client, make_judge(campaign))
    current = assign.next_assignment(judge)
    assign.mark_shown(current)
    url = reverse("annotation-record-answer", args=[campaign.slug, judge.token])

    def first_click_commits_meanwhile(judge, assignment):
        assign.record_judgment(assignment, {"answer": "same_meaning"}, 900)
        assign.next_assignment(judge)
        return False  # no longer the pair on show: the first request moved the judge on

    monkeypatch.setattr(assign, "is_on_show", first_click_commits_meanwhile)
    response = client.post(url, {"assignment": current.pk, "answer": "very_different", "response_ms": "1000"})
    assert response.status_code in (200, 302)
    assert Judgment.objects.get(assignment=current).values == {"answer": "same_meaning"}  # the first answer stands


def test_a_participant_id_that_joined_twice_is_marked_on_the_judges_table(client, campaign):
    add_pairs(campaign, 4)
    without_controls(campaign)
    url = reverse("annotation-show-welcome", args=[campaign.slug])
    for participant in ("p-twice", "p-twice", "p-once"):
        type(client)().post(url, {"consent": "yes", "crowd_participant": participant})
    judges = list(campaign.judges.order_by("pk"))
    assert [judge.crowd_participant for judge in judges] == ["p-twice", "p-twice", "p-once"]
    for judge in judges:  # a real answer each: the table lists judges who answered
        Judgment.objects.filter(judge=judge).delete()
        real = judge.assignments.filter(is_training=False).first()
        Judgment.objects.create(
            assignment=real, judge=judge, pair=real.pair, is_training=False, values={"answer": "same_meaning"}
        )
    table = campaign_reliability(campaign)
    joins = {row.judge.pk: row.crowd_joins for row in table.itertuples()}
    assert joins == {judges[0].pk: 2, judges[1].pk: 2, judges[2].pk: 1}
    html = render_to_string("campaigns/_reliability.html", {"reliability": table, "campaign": campaign})
    assert html.count("this id joined 2 times") == 2
