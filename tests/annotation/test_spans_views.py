"""The span task types through Django's test client (the no-JavaScript form, and hostile input)."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Judgment
from annotation.tasktypes.spans.tasktype import _changed_words
from campaigns.models import Campaign, Pair
from campaigns.task_types import task_type_names
from tests.factories import add_pairs, make_judge, remember, without_controls


@pytest.fixture
def spans_campaign(campaign):
    campaign.task_type = "spans"
    campaign.pairs_per_judge = 2
    campaign.save()
    add_pairs(campaign, 3)
    return without_controls(campaign)


def item_url(judge):
    return reverse("annotation-show-item", args=[judge.campaign.slug, judge.token])


def answer_url(judge):
    return reverse("annotation-record-answer", args=[judge.campaign.slug, judge.token])


def current(client, judge):
    remember(client, judge)
    client.get(item_url(judge))
    return Assignment.objects.select_related("pair").get(judge=judge, judgment__isnull=True)


def test_it_shows_each_word_as_a_toggle_and_as_a_checkbox_without_javascript(client, spans_campaign):
    judge = make_judge(spans_campaign)
    remember(client, judge)
    page = client.get(item_url(judge)).content.decode()
    pending = Assignment.objects.get(judge=judge)
    for index, word in enumerate(pending.pair.words("source")):
        assert f'data-field="source_tags" data-index="{index}">{word}</button>' in page
        assert f'name="source_tags" value="{index}"' in page
    assert 'aria-pressed="false"' in page
    assert "Nothing to tag" in page
    # The diff highlight is off by default in span tasks.
    assert "<mark>" not in page and "word changed" not in page


def test_the_campaign_option_turns_the_highlight_on(client, spans_campaign):
    spans_campaign.span_highlight = True
    spans_campaign.save()
    judge = make_judge(spans_campaign)
    remember(client, judge)
    page = client.get(item_url(judge)).content.decode()
    # Training pair 2: "She forgot her umbrella on the bus." / "She left her umbrella at the office."
    assert "word changed" in page


def test_punctuation_alone_is_never_highlighted_among_the_words():
    # diff.py's changed segment is "bus." (its tokens are whitespace-separated); the word "." is not changed.
    pair = Pair(source="She forgot her umbrella on the bus.", hypothesis="She left her umbrella at the office.")
    changed = _changed_words(pair, highlight=True)
    assert [pair.words("source")[i] for i in sorted(changed["source"])] == ["forgot", "on", "bus"]
    assert [pair.words("hypothesis")[i] for i in sorted(changed["hypothesis"])] == ["left", "at", "office"]


def test_it_stores_a_tagging_and_shows_the_reference_after_a_training_answer(client, spans_campaign):
    judge = make_judge(spans_campaign)
    remember(client, judge)
    training = current(client, judge)
    response = client.post(answer_url(judge), {"assignment": training.pk, "source_tags": ["0", "2"]})
    assert response.status_code == 200
    assert "Training: the expected answer and yours" in response.content.decode()
    judgment = Judgment.objects.get(assignment=training)
    assert judgment.values == {"source": [0, 2], "hypothesis": []}
    assert "answer" not in judgment.values


def test_nothing_to_tag_stores_an_empty_tagging(client, spans_campaign):
    judge = make_judge(spans_campaign)
    remember(client, judge)
    training = current(client, judge)
    client.post(answer_url(judge), {"assignment": training.pk, "nothing": "1", "source_tags": ["1"]})
    assert Judgment.objects.get(assignment=training).values == {"source": [], "hypothesis": []}


def test_an_empty_submit_without_confirmation_is_refused(client, spans_campaign):
    judge = make_judge(spans_campaign)
    remember(client, judge)
    training = current(client, judge)
    response = client.post(answer_url(judge), {"assignment": training.pk})
    assert response.status_code == 400
    assert "Nothing to tag" in response.content.decode()
    assert not Judgment.objects.exists()
    client.post(answer_url(judge), {"assignment": training.pk, "empty_confirmed": "1"})
    assert Judgment.objects.get().values == {"source": [], "hypothesis": []}


@pytest.mark.parametrize("tags", [["99"], ["-1"], ["x"], ["1.5"]])
def test_it_refuses_indexes_outside_the_sentence(client, spans_campaign, tags):
    judge = make_judge(spans_campaign)
    remember(client, judge)
    training = current(client, judge)
    response = client.post(answer_url(judge), {"assignment": training.pk, "hypothesis_tags": tags})
    assert response.status_code == 400
    assert "nothing was stored" in response.content.decode() or "Nothing to tag" in response.content.decode()
    assert not Judgment.objects.exists()


def test_it_refuses_another_judges_assignment(client, spans_campaign):
    owner, intruder = make_judge(spans_campaign), make_judge(spans_campaign)
    theirs = current(client, owner)
    remember(client, intruder)
    response = client.post(answer_url(intruder), {"assignment": theirs.pk, "source_tags": ["0"]})
    assert response.status_code == 400
    assert "not assigned to you" in response.content.decode()
    assert not Judgment.objects.exists()


def test_it_refuses_a_tagging_for_a_pair_of_another_campaign(client, spans_campaign, researcher):
    other = Campaign.objects.create(slug="other", name="Other", task_type="spans", created_by=researcher)
    add_pairs(other, 1)
    stranger = make_judge(other)
    theirs = current(client, stranger)
    judge = make_judge(spans_campaign)
    remember(client, judge)
    response = client.post(answer_url(judge), {"assignment": theirs.pk, "source_tags": ["0"]})
    assert response.status_code == 400
    assert not Judgment.objects.exists()


def test_similarity_and_spans_stores_both_answers(client, spans_campaign):
    spans_campaign.task_type = "similarity+spans"
    spans_campaign.save()
    judge = make_judge(spans_campaign)
    remember(client, judge)
    training = current(client, judge)
    page = client.get(item_url(judge)).content.decode()
    assert 'type="radio" name="answer" value="same_meaning"' in page
    response = client.post(answer_url(judge), {"assignment": training.pk, "source_tags": ["1"]})
    assert response.status_code == 400
    client.post(answer_url(judge), {"assignment": training.pk, "answer": "mostly_similar", "hypothesis_tags": ["1"]})
    judgment = Judgment.objects.get()
    assert judgment.values == {"answer": "mostly_similar", "source": [], "hypothesis": [1]}


def test_the_guidelines_explain_span_tagging(client, spans_campaign):
    judge = make_judge(spans_campaign, guidelines=False)
    remember(client, judge)
    page = client.get(reverse("annotation-show-guidelines", args=[spans_campaign.slug, judge.token])).content.decode()
    assert "no counterpart" in page and "Nothing to tag" in page


def test_a_researcher_creates_a_spans_campaign_with_the_form(client, researcher):
    client.force_login(researcher)
    data = {"name": "Tagged", "slug": "tagged", "task_type": "spans", "pairs_per_judge": 5, "overlap_target": 2}
    response = client.post(reverse("campaigns-create-campaign"), data)
    assert response.status_code == 302
    assert Campaign.objects.get(slug="tagged").task_type == "spans"


def test_the_api_creates_a_spans_campaign_and_refuses_an_unknown_type(client, researcher):
    client.force_login(researcher)
    url = "/api/campaigns/"
    response = client.post(url, {"slug": "api-spans", "name": "A", "task_type": "similarity+spans"}, "application/json")
    assert response.status_code == 201, response.content
    assert Campaign.objects.get(slug="api-spans").task_type == "similarity+spans"
    response = client.post(url, {"slug": "bad", "name": "B", "task_type": "ranking"}, "application/json")
    assert response.status_code == 400
    # Every registered type is offered, in the registry's order (a type added later too).
    assert response.json() == {"task_type": [f'"ranking" is not one of: {", ".join(task_type_names())}.']}


def test_import_pairs_creates_a_spans_campaign(tmp_path, db):
    from django.core.management import call_command

    corpus = tmp_path / "pairs.jsonl"
    corpus.write_text('{"source": "A cat sat.", "hypothesis": "A cat sat down."}\n')
    call_command("import_pairs", "cli-spans", str(corpus), "--create", "--task", "spans")
    campaign = Campaign.objects.get(slug="cli-spans")
    assert campaign.task_type == "spans"
    assert campaign.training_pairs.first().gold_tags["source"] == [0] * 8


def test_the_span_page_speaks_french(client, spans_campaign):
    judge = make_judge(spans_campaign)
    remember(client, judge)
    page = client.get(item_url(judge), HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Rien à marquer" in page and "Première phrase" in page
    training = current(client, judge)
    response = client.post(answer_url(judge), {"assignment": training.pk, "nothing": "1"}, HTTP_ACCEPT_LANGUAGE="fr")
    assert "Entraînement : la réponse attendue et la vôtre" in response.content.decode()


def test_a_spans_campaign_shows_no_control_items_but_similarity_and_spans_does(campaign):
    from annotation.controls import controls_per_judge

    campaign.task_type = "spans"
    assert controls_per_judge(campaign) == 0
    campaign.task_type = "similarity+spans"
    assert controls_per_judge(campaign) > 0


def test_the_upload_form_applies_the_bleu_range(client, researcher, campaign):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(researcher)
    source = "The cat sleeps on the old sofa in the living room."
    data = (
        f'{{"id": "copy", "source": "{source}", "hypothesis": "{source}"}}\n'
        f'{{"id": "kept", "source": "{source}", "hypothesis": "A cat is asleep on the old couch in the lounge."}}\n'
    )
    upload = SimpleUploadedFile("pairs.jsonl", data.encode())
    url = reverse("annotation-upload-corpus", args=[campaign.slug])
    response = client.post(url, {"file": upload, "format": "auto", "bleu_low": "5", "bleu_high": "20"}, follow=True)
    assert list(campaign.real_pairs.values_list("external_id", flat=True)) == ["kept"]
    assert "Rejected line 1: BLEU 100.0 is not below 20" in response.content.decode()
    upload = SimpleUploadedFile("pairs.jsonl", data.encode())
    response = client.post(url, {"file": upload, "format": "auto", "bleu_low": "5"})
    assert "Give both ends of the BLEU range" in response.content.decode()
