"""A fifth task type, added as docs/development/add-task-type.md says: one type, one report section, two registry lines.

The toy asks one yes/no question (is the hypothesis fluent English?). It is registered in
both registries for the test only, and the judge page, the pairs export and the report
page serve it with no other change to Parasol.
"""

import io

import pandas as pd
import pytest
from django import forms
from django.core.cache import cache
from django.core.management import call_command
from django.urls import reverse

from annotation import assignment as assign
from annotation.models import Judgment
from annotation.tasktypes import registry
from annotation.tasktypes.base import AnswerForm, TaskType
from campaigns import models as campaign_models
from campaigns.models import Campaign
from reports import task_sections
from reports.analysis.present import Table
from reports.exports import pairs_frame
from reports.frames import counted_judgments
from reports.task_sections.base import SYSTEMS, Section, TaskSection
from tests.factories import make_judge, remember, show_next

NAME = "toy-fluency"
JUDGE_TEMPLATE = "toy/_fluency.html"
GUIDELINES_TEMPLATE = "toy/_fluency_guidelines.html"


class FluencyAnswerForm(AnswerForm):
    fluent = forms.TypedChoiceField(choices=[(1, "Yes"), (0, "No")], coerce=int)


class Fluency(TaskType):
    name = NAME
    title = "Fluency (yes or no)"
    introduction = "You will read sentences and say whether each one reads as fluent English."
    default_answer_seconds = 5
    judge_template = JUDGE_TEMPLATE
    guidelines_template = GUIDELINES_TEMPLATE
    answer_form = FluencyAnswerForm
    invalid_answer_message = "Answer yes or no."
    stored_fields = ("values",)
    pair_columns = ["n_judgments", "fluent_share"]

    def answer(self, cleaned_data):
        return {"fluent": cleaned_data["fluent"]}

    def judgment_fields(self, answer):
        return {"label": "", "values": answer}

    def aggregate(self, judgments, pair_pks):
        fluent = pd.DataFrame(
            {"pair_pk": judgments["pair_pk"], "fluent": [v.get("fluent") for v in judgments["values"]]}
            if len(judgments)
            else {"pair_pk": [], "fluent": []}
        )
        by_pair = fluent.groupby("pair_pk")["fluent"]
        index = pd.Index(pair_pks)
        return pd.DataFrame(
            {
                "n_judgments": by_pair.size().reindex(index, fill_value=0).astype("int64"),
                "fluent_share": by_pair.mean().reindex(index),
            },
            index=index,
        )


def fluency_tables(campaigns):
    fluent = [values.get("fluent") for values in counted_judgments(campaigns, fields=("values",))["values"]]
    return {"toy_fluency": pd.DataFrame({"n_answers": [len(fluent)], "fluent_share": [pd.Series(fluent).mean()]})}


def _no_answers(report):
    return None if report.tables["toy_fluency"]["n_answers"].iloc[0] else "No answers yet: toy fluency waits for them."


FLUENCY_REPORT = TaskSection(
    sections=(Section("fluency", "Fluency", ("toy_fluency",), _no_answers), SYSTEMS.with_tables("systems")),
    declared=(Table("toy_fluency", "Share of answers calling the hypothesis fluent", section="toy_fluency"),),
    tables=fluency_tables,
)


@pytest.fixture
def toy_registered(monkeypatch, settings, tmp_path):
    """The toy in both registries (and its templates on the template path) for one test, then gone."""
    (tmp_path / "toy").mkdir()
    (tmp_path / JUDGE_TEMPLATE).write_text(
        '<button type="submit" name="fluent" value="1">Yes</button>'
        '<button type="submit" name="fluent" value="0">No</button>',
        encoding="utf-8",
    )
    (tmp_path / GUIDELINES_TEMPLATE).write_text("<p>Fluent means a native speaker would write it.</p>")
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}]
    monkeypatch.setitem(registry.TASK_TYPES, NAME, f"{__name__}.Fluency")
    monkeypatch.setitem(task_sections.TASK_SECTIONS, NAME, f"{__name__}.FLUENCY_REPORT")
    campaign_models.TASK_TYPE_CHOICES.append((NAME, Fluency.title))
    cache.clear()
    yield
    campaign_models.TASK_TYPE_CHOICES.remove((NAME, Fluency.title))
    registry.get_task_type.cache_clear()
    task_sections.task_section.cache_clear()
    cache.clear()


@pytest.fixture
def toy_campaign(toy_registered, researcher, tmp_path):
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


def test_the_toy_is_gone_once_its_test_ends():
    """Run after the tests above (file order): the fixture took the toy out of both registries again."""
    with pytest.raises(registry.UnknownTaskType):
        registry.get_task_type(NAME)
    with pytest.raises(task_sections.NoTaskSection):
        task_sections.task_section(NAME)
    assert NAME not in dict(campaign_models.TASK_TYPE_CHOICES)
