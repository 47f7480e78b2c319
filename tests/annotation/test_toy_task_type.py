"""A fifth task type, added as docs/development/add-task-type.md says: one type, one report section, one registry line.

The toy (`tests.toys`) asks one yes/no question (is the hypothesis fluent English?) and declares its answer's
vote, so its report has human labels. It is registered for the test only, and the judge page, the pairs
export and the report page serve it with no other change to Parasol; the generic tests run it too
(`tests.toys.every_task_type`).
"""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation import assignment as assign
from annotation.models import Judgment
from campaigns import task_types
from campaigns.forms import CampaignForm
from campaigns.models import Campaign
from reports import task_sections
from reports.exports import pairs_frame
from tests.factories import make_judge, remember, show_next
from tests.toys import TOY_TASK_TYPE as NAME
from tests.toys import Fluency, registered_toy_task_type


@pytest.fixture
def toy_campaign(toy_task_type, researcher, tmp_path):
    path = tmp_path / "pairs.csv"
    rows = [f"p{i},Source sentence {i}.,Hypothesis {i} here." for i in range(1, 5)]
    path.write_text("id,source,hypothesis\n" + "\n".join(rows) + "\n", encoding="utf-8")
    call_command("import_pairs", "toy", str(path), "--create", "--task", NAME, stdout=io.StringIO())
    campaign = Campaign.objects.get(slug="toy")
    campaign.created_by = researcher
    campaign.save()
    return campaign


def answer(client, judge, assignment, data):
    url = reverse("annotation-record-answer", args=[judge.campaign.slug, judge.token])
    return client.post(url, {"assignment": assignment.pk, "response_ms": 800, **data})


def test_a_judge_answers_the_toys_question_on_its_page(client, toy_campaign):
    judge = remember(client, make_judge(toy_campaign))
    page = client.get(reverse("annotation-show-item", args=["toy", judge.token])).content.decode()
    assert page.count('name="fluent"') == 2
    guidelines = client.get(reverse("annotation-show-guidelines", args=["toy", judge.token])).content.decode()
    assert "Fluent means a native speaker would write it." in guidelines

    refused = answer(client, judge, show_next(client, judge), {"fluent": "maybe"})
    assert refused.status_code == 400 and "Answer yes or no." in refused.content.decode()

    # The training pairs first (the toy gives no feedback), then the real pairs, each answered once.
    answered = []
    while (current := show_next(client, judge)) is not None:
        assert answer(client, judge, current, {"fluent": len(answered) % 2}).status_code in (200, 302)
        answered.append(current.pair)
    real = [pair for pair in answered if not pair.is_training]
    assert len(real) == toy_campaign.real_pairs.count()
    stored = Judgment.objects.filter(pair__in=real).order_by("pk")
    assert [j.values for j in stored] == [{"fluent": (len(answered) - len(real) + i) % 2} for i in range(len(real))]

    exported = pairs_frame(toy_campaign)
    assert list(exported.columns[-2:]) == Fluency.pair_columns
    assert exported["n_judgments"].tolist() == [1] * len(real)


def test_the_report_page_shows_the_toys_section_and_offers_its_table(client, toy_campaign, researcher):
    for value, pair in zip([1, 1, 0, 1], toy_campaign.real_pairs.order_by("pk"), strict=True):
        judge = make_judge(toy_campaign)
        assign.record_judgment(judge.assignments.create(pair=pair, position=10, top="source"), {"fluent": value}, 700)
    client.force_login(researcher)

    body = client.get(reverse("reports-show-report", args=["toy"])).content.decode()

    assert 'href="#report-fluency"' in body and 'href="#report-systems"' in body
    assert 'href="#report-corpora"' not in body
    assert "Share of answers calling the hypothesis fluent" in body and "0.75" in body
    download = client.get(f"{reverse('reports-download-report-table', args=['toy_fluency'])}?c=toy")
    assert download.status_code == 200
    assert download.content.decode().splitlines() == ["n_answers,fluent_share", "4,0.75"]


def test_an_unanswered_toy_campaign_says_why_its_section_is_empty(client, toy_campaign, researcher):
    client.force_login(researcher)
    body = client.get(reverse("reports-show-report", args=["toy"])).content.decode()
    assert "No answers yet: toy fluency waits for them." in body


def offered(name):
    """Whether the new-campaign form and the model's choices offer task type `name`, under its title."""
    form = dict(CampaignForm().fields["task_type"].choices)
    model = dict(Campaign._meta.get_field("task_type").choices)
    return name in form and name in model and form[name] == model[name] == Fluency.title


def test_the_toy_is_gone_once_its_registration_ends():
    with registered_toy_task_type():
        assert isinstance(task_types.get_task_type(NAME), Fluency)
        assert task_sections.task_section(NAME).sections
        assert offered(NAME)
        assert Campaign(task_type=NAME).get_task_type_display() == Fluency.title
    with pytest.raises(task_types.UnknownTaskType, match=f"{NAME!r}; known task types: similarity, "):
        task_types.get_task_type(NAME)
    with pytest.raises(task_sections.NoTaskSection):
        task_sections.task_section(NAME)
    assert not offered(NAME)
    assert Campaign().task_type_problem(NAME).startswith(f"unknown task type {NAME!r}; known task types:")
