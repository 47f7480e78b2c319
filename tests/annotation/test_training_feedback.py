"""Training feedback for every task type, the training file's explanation, the welcome's promise,
criteria's source-first order, and similarity+spans asking for a missing answer in words."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import assignment as assign
from annotation.controls import protocol_of
from annotation.diff import word_diff
from annotation.joining import what_to_expect
from annotation.models import Judgment
from annotation.stats import MIN_TIMED_ANSWERS, answer_seconds
from campaigns.models import load_default_training_rows
from campaigns.task_types import get_task_type
from tests.annotation.explanations import speaks_of_tagging
from tests.factories import add_pairs, gives_feedback, make_judge, remember, without_controls
from tests.toys import every_task_type


def item_url(judge):
    return reverse("annotation-show-item", args=[judge.campaign.slug, judge.token])


def answer_url(judge):
    return reverse("annotation-record-answer", args=[judge.campaign.slug, judge.token])


def pending(client, judge):
    remember(client, judge)
    client.get(item_url(judge))
    return assign.pending_assignment(judge)


@every_task_type
def test_the_default_training_set_explains_every_pair_and_its_expectations_read(task_type):
    rows = load_default_training_rows(task_type)
    checker = get_task_type(task_type)
    assert len(rows) == 5
    for row in rows:
        assert row["source"].strip() and row["hypothesis"].strip()
        if gives_feedback(checker):
            # What the feedback compares with: an expected answer, or (span tagging) a reference tagging.
            assert row["explanation"].strip() and (row.get("expected") or "source_tags" in row)
        assert checker.training_problem({"expected": row.get("expected", "")}) is None


@every_task_type
def test_every_training_answer_shows_the_expected_answer_yours_and_why(client, campaign, task_type):
    """A type that gives feedback shows it after every default training pair; one that does not moves on."""
    campaign.task_type = task_type
    campaign.save()
    add_pairs(campaign, 3)
    without_controls(campaign)
    judge = make_judge(campaign)
    checker = get_task_type(task_type)
    for position, row in enumerate(load_default_training_rows(task_type), start=1):
        current = pending(client, judge)
        assert current.is_training and current.pair.training_position == position
        response = client.post(
            answer_url(judge), {"assignment": current.pk, **checker.example_answer()}, HTTP_HX_REQUEST="true"
        )
        body = response.content.decode()
        assert response.status_code == 200
        if not gives_feedback(checker):
            assert 'class="item feedback"' not in body and Judgment.objects.filter(assignment=current).exists()
            continue
        feedback = checker.feedback(Judgment.objects.get(assignment=current))
        assert feedback and 'class="item feedback"' in body
        assert json.dumps(row["explanation"], ensure_ascii=False)[1:-1].replace("'", "&#x27;") in body
        if feedback.get("feedback_sides"):
            assert "Reference" in body
        if feedback.get("feedback_rows"):
            assert re.search(r'<td class="expected">[^<—]+</td>', body)
        assert feedback.get("feedback_sides") or feedback.get("feedback_rows")
    assert "1 / 3" in client.get(item_url(judge)).content.decode()


def test_criteria_feedback_shows_each_range_and_whether_the_rating_falls_in_it(client, campaign):
    campaign.task_type = "criteria"
    campaign.save()
    add_pairs(campaign, 3)
    judge = make_judge(campaign)
    current = pending(client, judge)
    ratings = {"adequacy": 5, "fluency": 1, "dissimilarity": 2, "overall": 4}
    body = client.post(answer_url(judge), {"assignment": current.pk, **ratings}).content.decode()
    # Pair 1 expects adequacy 4-5, fluency 5, dissimilarity 2-3, overall 3-5.
    rows = re.findall(r'<th scope="row">(.*?)</th>\s*<td class="expected">(.*?)</td>\s*<td class="yours">(\d)', body)
    assert rows == [
        ("Adequacy", "4–5", "5"),
        ("Fluency", "5", "1"),
        ("Lexical dissimilarity", "2–3", "2"),
        ("Overall", "3–5", "4"),
    ]
    assert body.count("✓ as expected") == 3 and body.count("✗ differs") == 1


def test_a_training_file_carries_its_explanations_in_json_and_csv(client, campaign, researcher):
    client.force_login(researcher)
    url = reverse("annotation-upload-corpus", args=[campaign.slug])
    lines = [
        {"source": f"S {i}.", "hypothesis": f"H {i}.", "expected": "same_meaning", "explanation": f"Why {i}."}
        for i in range(5)
    ]
    jsonl = "".join(json.dumps(line) + "\n" for line in lines).encode()
    client.post(url, {"file": SimpleUploadedFile("t.jsonl", jsonl), "format": "auto", "training": "on"})
    assert [p.metadata["explanation"] for p in campaign.training_pairs] == [f"Why {i}." for i in range(5)]
    csv = "source,hypothesis,expected,explanation\n" + "".join(
        f'S {i}.,H {i}.,mostly_similar|same_meaning,"Because, {i}."\n' for i in range(5)
    )
    client.post(url, {"file": SimpleUploadedFile("t.csv", csv.encode()), "format": "auto", "training": "on"})
    assert [p.metadata["explanation"] for p in campaign.training_pairs] == [f"Because, {i}." for i in range(5)]
    assert campaign.training_pairs.first().metadata["expected"] == "mostly_similar|same_meaning"


def test_a_training_file_with_an_unreadable_expected_answer_is_refused_by_line(client, campaign, researcher):
    client.force_login(researcher)
    csv = "source,hypothesis,expected\n" + "".join(f"S {i}.,H {i}.,same_meaning\n" for i in range(4))
    csv += "S 4.,H 4.,roughly_same\n"
    response = client.post(
        reverse("annotation-upload-corpus", args=[campaign.slug]),
        {"file": SimpleUploadedFile("t.csv", csv.encode()), "format": "auto", "training": "on"},
    )
    body = response.content.decode()
    assert response.status_code == 200 and "line 6" in body and "roughly_same" in body
    assert not campaign.training_pairs.filter(source="S 0.").exists()


def test_criteria_show_the_source_first_labelled_and_questions_name_roles(client, campaign):
    campaign.task_type = "criteria"
    campaign.save()
    add_pairs(campaign, 10)
    judge = make_judge(campaign)
    remember(client, judge)
    for _ in range(8):
        current = pending(client, judge)
        page = client.get(item_url(judge)).content.decode()
        assert current.top == "source"
        roles = re.findall(r'<p class="sentence-role">(\w+)</p>', page.split('class="pair"')[1])
        assert roles == ["Original", "Paraphrase"]
        for word in ("first", "second", "top", "bottom"):
            assert not re.search(rf"<legend>[^<]*\b{word}\b", page, re.I)
        client.post(answer_url(judge), {"assignment": current.pk, **get_task_type("criteria").example_answer()})


def test_similarity_keeps_a_random_recorded_order(campaign):
    add_pairs(campaign, 40)
    campaign.pairs_per_judge = 40
    campaign.save()
    judge = make_judge(campaign)
    assign.reserve_before_training(judge, wanted=40)
    assert set(judge.assignments.values_list("top", flat=True)) == {"source", "hypothesis"}


@pytest.mark.parametrize("htmx", [False, True])
def test_nothing_to_tag_without_a_five_way_answer_asks_for_it_in_words(client, campaign, htmx):
    campaign.task_type = "similarity+spans"
    campaign.save()
    add_pairs(campaign, 3)
    judge = make_judge(campaign)
    current = pending(client, judge)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    response = client.post(answer_url(judge), {"assignment": current.pk, "nothing": "1"}, **headers)
    body = response.content.decode()
    assert response.status_code == 400
    assert 'role="alert">First choose how close the meanings are' in body
    assert f'data-assignment="{current.pk}"' in body and ("<html" in body) is not htmx
    assert not Judgment.objects.exists()


def test_the_welcome_promises_as_many_pairs_as_the_counter_shows_with_hidden_controls(client, campaign):
    add_pairs(campaign, 40)
    campaign.pairs_per_judge = 8
    campaign.save()
    protocol = protocol_of(campaign)
    protocol.control_share = 0.2
    protocol.save()
    welcome = client.get(reverse("annotation-show-welcome", args=[campaign.slug])).content.decode()
    promised = int(re.search(r"then up to (\d+) pairs", welcome).group(1))
    client.post(reverse("annotation-show-welcome", args=[campaign.slug]), {"consent": "yes"})
    judge = campaign.judges.get()
    assert judge.control_positions  # hidden controls are planned
    judge.english_level = "good"
    judge.guidelines_read_at = judge.consented_at
    judge.save()
    for _ in range(5):
        current = pending(client, judge)
        client.post(answer_url(judge), {"assignment": current.pk, "answer": "same_meaning"})
    page = client.get(item_url(judge)).content.decode()
    counter = int(re.search(r'<span class="count">1 / (\d+)</span>', page).group(1))
    assert promised == counter == 8 + len(judge.control_positions)


def test_the_time_estimate_uses_the_task_types_default_until_answers_are_timed(campaign):
    add_pairs(campaign, 60)
    campaign.pairs_per_judge = 20
    campaign.save()
    without_controls(campaign)
    similarity = get_task_type("similarity")
    assert answer_seconds(campaign) == (similarity.default_answer_seconds, "protocol")
    assert what_to_expect(campaign)["minutes"] == -(-25 * similarity.default_answer_seconds // 60)
    judge = make_judge(campaign)
    for pair in campaign.real_pairs[:MIN_TIMED_ANSWERS]:
        assignment = judge.assignments.create(pair=pair, position=pair.pk, top="source")
        Judgment.objects.create(
            assignment=assignment, judge=judge, pair=pair, values={"answer": "same_meaning"}, response_ms=6000
        )
    assert answer_seconds(campaign) == (6.0, "campaign")
    expect = what_to_expect(campaign)
    # 25 pairs (5 training, 20 real) at the measured 6 s: 2.5 minutes, rounded up.
    assert expect["time_from"] == "campaign" and expect["minutes"] == 3


def marked_on_item(page, task_type):
    """The words the judge saw in yellow on the pair page, top sentence first."""
    if get_task_type(task_type).shows_pair:
        pair = page.split('<div class="pair">')[1].split("</div>")[0]
        return " ".join(re.findall(r"<mark>(.*?)</mark>", pair)).split()
    return re.findall(r'class="word changed"[^>]*>([^<]*)</button>', page)


def marked_on_feedback(body, task_type):
    """The words in yellow on the feedback: on the pair, or (span types) on the reference tagging."""
    if get_task_type(task_type).shows_pair:
        pair = body.split('<div class="pair">')[1].split("</div>")[0]
        return " ".join(re.findall(r"<mark>(.*?)</mark>", pair)).split()
    references = re.findall(r'<p class="reference">(.*?)</p>', body)
    words = [
        re.sub(r"<[^>]+>|\[tagged\]", "", mark)
        for line in references
        for mark in re.findall(r"<mark>(.*?)</mark>", line)
    ]
    return " ".join(words).split()


@pytest.mark.parametrize("highlight", [False, True])
@every_task_type
def test_the_feedback_shows_the_pair_as_the_item_showed_it(client, campaign, task_type, highlight):
    campaign.task_type, campaign.span_highlight = task_type, highlight
    campaign.save()
    add_pairs(campaign, 3)
    without_controls(campaign)
    judge = make_judge(campaign)
    for _position in range(5):
        current = pending(client, judge)
        page = client.get(item_url(judge)).content.decode()
        answer = {"assignment": current.pk, **get_task_type(task_type).example_answer()}
        body = client.post(answer_url(judge), answer, HTTP_HX_REQUEST="true").content.decode()
        if not gives_feedback(get_task_type(task_type)):
            # No feedback to compare (optional): the pair page itself still shows yellow only where it is on.
            assert 'class="item feedback"' not in body
            shown = get_task_type(task_type).highlights(campaign)
            assert not marked_on_item(page, task_type) or shown
            continue
        assert body.lstrip().startswith('<div id="item" class="item feedback"')
        # Both sentences, in the order the pair page showed them (the span types show them as taggings).
        top, bottom = current.top_sentence, current.bottom_sentence
        plain = re.sub(r"<[^>]+>|\[tagged\]", "", body)
        plain = re.sub(r"\s+", " ", plain).replace(" .", ".").replace(" ,", ",")
        assert bottom in plain[plain.index(top) + len(top) :], plain
        assert marked_on_feedback(body, task_type) == marked_on_item(page, task_type)
        if "source_tags" not in get_task_type(task_type).answer_form.base_fields:
            # A type without tagging never speaks of it: not in its guidelines, its pair page or its feedback.
            for text in (page, body):
                assert not speaks_of_tagging(re.sub(r"<[^>]+>", " ", text)), text
        shown = get_task_type(task_type).highlights(campaign)
        differs = any(segment.changed for sentence in word_diff(top, bottom) for segment in sentence)
        assert bool(marked_on_item(page, task_type)) is (shown and differs)
