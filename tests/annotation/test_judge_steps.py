"""The judge protocol is a state machine kept by the server (issue 36 §1).

Tables: for every judge endpoint × HTTP method × step × task type, what is served, what is
refused, and that a refused request stores nothing; for every assignment a judge holds, that
only the one on show, of the current phase, takes an answer. Judges reach each step the way a
browser does (consent POST, level, guidelines, the pages), never through the ORM.
"""

from contextlib import contextmanager
from itertools import product
from urllib.parse import urlencode

import pytest
from django.db import transaction
from django.urls import reverse

from annotation.controls import protocol_of
from annotation.models import Assignment, Judge, Judgment, Step
from annotation.views import STEP_PAGES
from campaigns.task_types import task_type_of
from tests.factories import add_pairs
from tests.toys import EVERY_TASK_TYPE, TOY_TASK_TYPE

# Where the walk leaves the judge: the model's steps, and "end" (the pairs step with no pair left).
STEPS = ["level", "guidelines", "training", "pairs", "end"]
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "POST htmx"]


def answer_of(judge):
    """A valid answer to any pair of the judge's task type, as its page posts it."""
    return task_type_of(judge.campaign).example_answer() | {"response_ms": "1500"}


# endpoint: (URL name, the methods it takes, the steps it serves, what a served POST stores)
ENDPOINTS = {
    "item": ("annotation-show-item", {"GET", "HEAD"}, {"training", "pairs", "end"}, None),
    "level": ("annotation-ask-english-level", {"GET", "HEAD", "POST"}, {"level", "guidelines", "training"}, "level"),
    "guidelines": (
        "annotation-show-guidelines",
        {"GET", "HEAD", "POST"},
        {"guidelines", "training", "pairs", "end"},
        "guidelines",
    ),
    "answer": ("annotation-record-answer", {"POST"}, {"training", "pairs", "end"}, "judgments"),
    "questions": ("annotation-show-questionnaire", {"GET", "HEAD", "POST"}, {"end"}, "questionnaire"),
    "thanks": ("annotation-show-thanks", {"GET", "HEAD"}, {"end"}, None),
    "resume": ("annotation-adopt-judge", {"POST"}, set(STEPS), None),
}
# A served POST stores its field only at these steps (the level is locked once real judging starts,
# the guidelines are read once, the pair on show is gone at the end).
WRITES_AT = {
    "level": {"level", "guidelines", "training"},
    "guidelines": {"guidelines"},
    "judgments": {"training", "pairs"},
}
WRITES_AT["questionnaire"] = {"end"}


@pytest.fixture(params=EVERY_TASK_TYPE)
def task_campaign(request, campaign):
    if request.param == TOY_TASK_TYPE:
        request.getfixturevalue("toy_task_type")
    campaign.task_type = request.param
    campaign.pairs_per_judge = 2
    campaign.save()
    add_pairs(campaign, 4)
    protocol = protocol_of(campaign)
    protocol.questionnaire = "Anything to add?"
    protocol.save()  # hidden controls stay on (the default share), where the task type has them
    return campaign


def url_of(judge, name):
    return reverse(name, args=[judge.campaign.slug, Judge.path_token])


def on_show(judge):
    """The pair the judge's page shows now (their first unanswered assignment), or None."""
    return judge.assignments.filter(judgment__isnull=True).order_by("position").first()


def answer_shown(client, judge):
    """What the browser does: open the pair page, answer the pair it shows."""
    assert client.get(url_of(judge, "annotation-show-item")).status_code == 200
    response = client.post(
        url_of(judge, "annotation-record-answer"), answer_of(judge) | {"assignment": on_show(judge).pk}
    )
    assert response.status_code in (200, 302), response.content
    return response


def join(client, campaign, crowd=None):
    welcome = reverse("annotation-show-welcome", args=[campaign.slug])
    response = client.post(welcome, {"consent": "yes", **(crowd or {})})
    assert response.status_code == 302
    return Judge.objects.latest("pk")


def walk(client, campaign):
    """A judge who joins in this client and goes through the protocol by its pages, stopping at each step:
    yields (step, judge) for every step of STEPS, in order."""
    judge = join(client, campaign)
    yield "level", judge
    client.post(url_of(judge, "annotation-ask-english-level"), {"english_level": "good"})
    yield "guidelines", fresh(judge)
    client.post(url_of(judge, "annotation-show-guidelines"))
    client.get(url_of(judge, "annotation-show-item"))
    yield "training", fresh(judge)
    while fresh(judge).step == Step.TRAINING:
        answer_shown(client, judge)
    answer_shown(client, judge)  # one real pair, which locks the level
    client.get(url_of(judge, "annotation-show-item"))  # the next pair on show
    yield "pairs", fresh(judge)
    while on_show(judge) is not None:
        answer_shown(client, judge)
    yield "end", fresh(judge)


def walk_to(client, campaign, step):
    """A judge who joined in this client and went through the protocol up to `step`."""
    return next(judge for reached, judge in walk(client, campaign) if reached == step)


def fresh(judge):
    judge.refresh_from_db()
    return judge


def stored(judge):
    """What a judge's requests can store, field by field."""
    judge = Judge.objects.get(pk=judge.pk)
    return {
        "level": judge.english_level,
        "guidelines": judge.guidelines_read_at,
        "questionnaire": judge.questionnaire_answers,
        "finished": judge.finished_at,
        "judgments": sorted(Judgment.objects.filter(judge=judge).values_list("assignment_id", "values")),
        "judges": Judge.objects.count(),
    }


@contextmanager
def undone():
    """Whatever the request stores is rolled back after, so every row of a table starts from the same judge."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def send(client, url, method, data):
    if method == "POST htmx":
        return client.post(url, data, HTTP_HX_REQUEST="true")
    if method in ("GET", "HEAD"):
        return client.generic(method, url)
    return client.generic(method, url, urlencode(data), content_type="application/x-www-form-urlencoded")


def body_for(endpoint, judge):
    """A form that would store something if the step allowed it."""
    pending = on_show(judge) or judge.assignments.order_by("position").last()
    return {
        "level": {"english_level": "native"},
        "answer": answer_of(judge) | {"assignment": pending.pk},
        "questions": {"q0": "Nothing."},
    }.get(endpoint, {})


def test_every_endpoint_and_method_serves_only_what_the_step_allows_and_stores_nothing_else(client, task_campaign):
    for step, judge in walk(client, task_campaign):
        check_every_request(client, judge, step)


def check_every_request(client, judge, step):
    for endpoint, method in product(ENDPOINTS, METHODS):
        name, methods, steps, field = ENDPOINTS[endpoint]
        verb = method.split()[0]
        with undone():
            before = stored(judge)
            response = send(client, url_of(judge, name), method, body_for(endpoint, judge))
            after = stored(judge)
        case = (endpoint, method, step)
        changed = {key for key in before if before[key] != after[key]}
        served = verb in methods and step in steps
        assert changed == ({field} if served and verb == "POST" and step in WRITES_AT.get(field, ()) else set()), case
        if verb not in methods:
            assert response.status_code == 405, case
        elif not served and verb == "POST":
            assert response.status_code == 409, case
            assert f"go back to {judge.step.label}" in response.content.decode(), case
            if method == "POST htmx":
                assert response["HX-Redirect"] == url_of(judge, STEP_PAGES[judge.step]), case
        elif not served:
            assert response.status_code == 302, case
            assert response.url == url_of(judge, STEP_PAGES[judge.step]), case
        else:
            assert response.status_code in (200, 302), case


def test_only_the_pair_on_show_takes_an_answer(client, task_campaign):
    """Every assignment the judge holds (training, reserved real pairs, hidden controls), another judge's,
    and one that does not exist: only the pair on show, of the current phase, is stored."""
    other = walk_to(client.__class__(), task_campaign, "training")
    for (step, judge), htmx in zip(walk(client, task_campaign), [False, True, False, True, False], strict=True):
        check_every_assignment(client, judge, step, other, htmx)


def check_every_assignment(client, judge, step, other, htmx):
    shown = on_show(judge) if step in ("training", "pairs") else None
    candidates = [*judge.assignments.order_by("position"), *other.assignments.all()]
    mine = [assignment for assignment in candidates if assignment.judge_id == judge.pk]
    assert any(not assignment.is_training for assignment in mine)  # real pairs reserved at joining
    if task_type_of(judge.campaign).control_kinds:
        assert any(assignment.pair.is_control for assignment in mine)  # and a hidden control among them
    if step == "training":
        assert shown.is_training
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    url = url_of(judge, "annotation-record-answer")
    for assignment in candidates:
        with undone():
            before = stored(judge)
            response = client.post(url, answer_of(judge) | {"assignment": assignment.pk}, **headers)
            after = stored(judge)
        answered_before = any(row[0] == assignment.pk for row in before["judgments"])
        new = [row[0] for row in after["judgments"] if row not in before["judgments"]]
        assert new == ([assignment.pk] if assignment == shown else []), (assignment, response.status_code)
        assert Judgment.objects.filter(judge=other).count() == 0
        if assignment.judge_id != judge.pk:
            assert response.status_code in (400, 409), assignment
        elif assignment != shown and not answered_before:
            assert response.status_code in (400, 409), (assignment, response.content)
            assert b"nothing was stored" in response.content
    before = stored(judge)
    missing = client.post(
        url, answer_of(judge) | {"assignment": Assignment.objects.order_by("pk").last().pk + 1}, **headers
    )
    assert missing.status_code in (400, 409) and stored(judge) == before


def test_a_fresh_judge_who_posts_answers_without_the_steps_stores_nothing(client, task_campaign):
    """Right after consent, from a crowd link: every answer to every assignment, every method, refused."""
    crowd_link = reverse("annotation-show-welcome", args=[task_campaign.slug]) + "?PROLIFIC_PID=p1&STUDY_ID=s"
    assert 'value="p1"' in client.get(crowd_link).content.decode()  # carried by the consent form
    judge = join(client, task_campaign, {"crowd_participant": "p1", "crowd_study": "s"})
    assert judge.crowd_participant == "p1" and judge.step == Step.LEVEL
    url = url_of(judge, "annotation-record-answer")
    for assignment, method in product(judge.assignments.all(), ["POST", "POST htmx"]):
        send(client, url, method, answer_of(judge) | {"assignment": assignment.pk})
    # Each step done alone: still nothing before the pair is on show.
    client.post(url_of(judge, "annotation-ask-english-level"), {"english_level": "good"})
    for assignment in judge.assignments.all():
        client.post(url, answer_of(judge) | {"assignment": assignment.pk})
    client.post(url_of(judge, "annotation-show-guidelines"))
    for assignment in judge.assignments.filter(is_training=False):
        client.post(url, answer_of(judge) | {"assignment": assignment.pk})
    assert not Judgment.objects.exists()


def test_a_real_answer_before_the_training_is_refused_and_names_the_training(client, task_campaign):
    judge = walk_to(client, task_campaign, "training")
    real = judge.assignments.filter(is_training=False).first()
    response = client.post(url_of(judge, "annotation-record-answer"), answer_of(judge) | {"assignment": real.pk})
    assert response.status_code == 409 and "the training pairs" in response.content.decode()
    assert not Judgment.objects.exists()


def test_a_resumed_judge_is_held_to_their_step(client, task_campaign):
    """A resume link adopted in another browser continues the judge at their step, no further."""
    judge = walk_to(client, task_campaign, "guidelines")
    other_browser = client.__class__()
    link = reverse("annotation-show-item", args=[task_campaign.slug, judge.token])
    assert "Continue my work" in other_browser.get(link).content.decode()
    unadopted = other_browser.post(
        reverse("annotation-record-answer", args=[task_campaign.slug, judge.token]),
        answer_of(judge) | {"assignment": judge.assignments.first().pk},
    )
    assert unadopted.status_code == 403
    other_browser.post(reverse("annotation-adopt-judge", args=[task_campaign.slug, judge.token]))
    assert other_browser.get(url_of(judge, "annotation-show-item")).url == url_of(judge, "annotation-show-guidelines")
    for assignment in judge.assignments.all():
        other_browser.post(url_of(judge, "annotation-record-answer"), answer_of(judge) | {"assignment": assignment.pk})
    assert not Judgment.objects.exists()


def test_a_double_click_on_the_pair_on_show_stores_one_answer(client, task_campaign):
    judge = walk_to(client, task_campaign, "training")
    shown = on_show(judge)
    url = url_of(judge, "annotation-record-answer")
    first = client.post(url, answer_of(judge) | {"assignment": shown.pk})
    again = client.post(url, answer_of(judge) | {"assignment": shown.pk})
    # The training feedback both times (a type without feedback sends the judge on, both times).
    assert first.status_code == again.status_code and first.status_code in (200, 302)
    assert list(Judgment.objects.values_list("assignment_id", flat=True)) == [shown.pk]


def test_an_answer_to_a_pair_not_yet_displayed_is_refused_even_when_it_is_next(client, task_campaign):
    """After a training answer, the next pair is on show only once the page shows it (timing starts there)."""
    judge = walk_to(client, task_campaign, "training")
    answer_shown(client, judge)
    following = on_show(judge)
    assert following.shown_at is None
    refused = client.post(url_of(judge, "annotation-record-answer"), answer_of(judge) | {"assignment": following.pk})
    assert refused.status_code == 409 and Judgment.objects.count() == 1
    client.get(url_of(judge, "annotation-show-item"))
    accepted = client.post(url_of(judge, "annotation-record-answer"), answer_of(judge) | {"assignment": following.pk})
    # The training feedback (200), or the next pair for a type without feedback (302).
    assert accepted.status_code in (200, 302) and Judgment.objects.count() == 2


def test_the_refusal_speaks_the_judges_language(client, campaign):
    add_pairs(campaign, 2)
    judge = walk_to(client, campaign, "guidelines")
    url = url_of(judge, "annotation-record-answer")
    refused = client.post(
        url, answer_of(judge) | {"assignment": judge.assignments.first().pk}, HTTP_ACCEPT_LANGUAGE="fr"
    )
    assert refused.status_code == 409
    assert "rien n’a été enregistré ; veuillez reprendre à l’étape : les consignes." in refused.content.decode()
