"""The judgments' admin lists each one's answer and filters them by 5-way answer (kept in `Judgment.values`)."""

from annotation.models import Assignment, Judgment
from tests.factories import add_pairs, make_judge


def test_it_filters_the_judgments_by_their_5_way_answer(admin_client, campaign):
    judge = make_judge(campaign)
    for position, (pair, answer) in enumerate(zip(add_pairs(campaign, 2), ["same_meaning", "very_different"]), 1):
        assignment = Assignment.objects.create(judge=judge, pair=pair, position=position, top="source")
        Judgment.objects.create(assignment=assignment, judge=judge, pair=pair, values={"answer": answer})

    def listed(query=""):
        response = admin_client.get(f"/admin/annotation/judgment/{query}", secure=True)
        assert response.status_code == 200
        return [judgment.values for judgment in response.context["cl"].result_list]

    assert listed("?answer=same_meaning") == [{"answer": "same_meaning"}]
    assert sorted(v["answer"] for v in listed()) == ["same_meaning", "very_different"]
    assert len(listed("?answer=nonsense")) == 2  # an unknown answer filters nothing out
