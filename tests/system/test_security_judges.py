"""Attacks on the anonymous judge flow, replayed against the live server.

Each test plays the attacker with `requests` (a separate HTTP client with its
own cookie jar) and asserts the attack now fails safely.
"""

import re

import pytest
import requests
from django.utils import timezone

from annotation.controls import protocol_of
from annotation.models import Judge, Judgment
from campaigns.models import Campaign
from tests.factories import add_pairs

pytestmark = pytest.mark.django_db(transaction=True)

PARTICIPANT_PARAMETERS = ("PROLIFIC_PID", "participant", "crowd_participant")


@pytest.fixture
def crowd_campaign(researcher):
    campaign = Campaign.objects.create(slug="crowd", name="Crowd", created_by=researcher, pairs_per_judge=2)
    add_pairs(campaign, 4)
    protocol = protocol_of(campaign)
    protocol.control_share = 0
    protocol.completion_code = "SECRET-CODE-42"
    protocol.save()
    return campaign


def csrf_post(session, url, data):
    page = session.get(url)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return session.post(url, data | {"csrfmiddlewaretoken": token}, headers={"Referer": url}, allow_redirects=False)


def join_as(session, base, slug, participant):
    url = f"{base}/j/{slug}/?PROLIFIC_PID={participant}"
    response = csrf_post(session, url, {"consent": "yes", "crowd_participant": participant})
    assert response.status_code == 302
    # The token travels in the cookie, never in the redirect's path.
    assert "/me/" in response.headers["Location"]
    cookie = next(value for name, value in session.cookies.get_dict().items() if name.startswith("parasol_judge_"))
    return Judge.objects.get(token=cookie)


@pytest.mark.parametrize("parameter", PARTICIPANT_PARAMETERS)
def test_a_known_participant_id_never_hands_out_the_judge(live_server, crowd_campaign, parameter):
    victim = join_as(requests.Session(), live_server.url, "crowd", "victim-id")
    attacker = requests.Session()
    response = attacker.get(f"{live_server.url}/j/crowd/?{parameter}=victim-id", allow_redirects=False)
    assert response.status_code == 200
    assert victim.token not in response.text and victim.token not in str(attacker.cookies.get_dict())
    assert "consent" in response.text
    # Consenting with the id creates a new judge; the victim's stays untouched.
    join_as(attacker, live_server.url, "crowd", "victim-id")
    assert Judge.objects.filter(crowd_participant="victim-id").count() == 2
    victim.refresh_from_db()
    assert victim.english_level == "" and victim.questionnaire_answers == {}


def test_a_known_and_an_unknown_id_answer_alike(live_server, crowd_campaign):
    join_as(requests.Session(), live_server.url, "crowd", "known")
    pages = [
        requests.get(f"{live_server.url}/j/crowd/?PROLIFIC_PID={pid}", allow_redirects=False)
        for pid in ("known", "xyz01")
    ]
    assert [page.status_code for page in pages] == [200, 200]
    # Only the CSRF token and the echoed id may differ.
    strip = lambda text: re.sub(r'(value="|"X-CSRFToken": ")[^"]*"', "", text)  # noqa: E731
    assert strip(pages[0].text) == strip(pages[1].text)


def test_a_closed_campaign_refuses_an_id_and_a_new_judge(live_server, crowd_campaign):
    join_as(requests.Session(), live_server.url, "crowd", "known")
    Campaign.objects.filter(pk=crowd_campaign.pk).update(is_open=False)
    before = Judge.objects.count()
    for pid in ("known", "new-one"):
        response = requests.get(f"{live_server.url}/j/crowd/?PROLIFIC_PID={pid}", allow_redirects=False)
        assert response.status_code == 200 and "closed" in response.text
    session = requests.Session()
    session.get(f"{live_server.url}/j/crowd/")
    response = session.post(
        f"{live_server.url}/j/crowd/",
        {"consent": "yes", "csrfmiddlewaretoken": session.cookies.get("csrftoken")},
        headers={"Referer": f"{live_server.url}/j/crowd/"},
        allow_redirects=False,
    )
    assert response.status_code == 200 and "closed" in response.text
    assert Judge.objects.count() == before


def test_opening_someone_elses_resume_link_asks_before_adopting(live_server, crowd_campaign):
    victim_browser = requests.Session()
    victim = join_as(victim_browser, live_server.url, "crowd", "v1")
    attacker = Judge.objects.create(campaign=crowd_campaign, consented_at=timezone.now())
    response = victim_browser.get(f"{live_server.url}/j/crowd/{attacker.token}/", allow_redirects=False)
    assert response.status_code == 200 and "Continue my work" in response.text
    # The victim's browser still holds its own judge, not the attacker's.
    assert victim_browser.cookies.get(f"parasol_judge_{crowd_campaign.pk}") == victim.token
    for step in ("level/", "guidelines/", "thanks/", "questions/"):
        page = requests.get(f"{live_server.url}/j/crowd/{attacker.token}/{step}", allow_redirects=False)
        assert page.status_code == 200 and "Continue my work" in page.text
        assert "parasol_judge" not in page.headers.get("Set-Cookie", "")
    # Saying yes adopts it.
    form_url = f"{live_server.url}/j/crowd/{attacker.token}/resume/"
    response = victim_browser.post(
        form_url,
        {"csrfmiddlewaretoken": victim_browser.cookies.get("csrftoken")},
        headers={"Referer": form_url},
        allow_redirects=False,
    )
    assert response.status_code == 302
    assert victim_browser.cookies.get(f"parasol_judge_{crowd_campaign.pk}") == attacker.token


def answer_everything(session, base, judge):
    """Walk a judge through level, guidelines and every pair with plain HTTP."""
    csrf_post(session, f"{base}/j/crowd/{judge.token}/level/", {"english_level": "good"})
    csrf_post(session, f"{base}/j/crowd/{judge.token}/guidelines/", {})
    for _ in range(20):
        page = session.get(f"{base}/j/crowd/{judge.token}/", allow_redirects=False)
        if page.status_code != 200:
            return page
        assignment = re.search(r'name="assignment" value="(\d+)"', page.text).group(1)
        csrf_post_answer(session, base, judge, assignment)
    raise AssertionError("the judge never finished")


def csrf_post_answer(session, base, judge, assignment):
    url = f"{base}/j/crowd/{judge.token}/answer/"
    data = {"assignment": assignment, "answer": "same_meaning", "csrfmiddlewaretoken": session.cookies.get("csrftoken")}
    return session.post(url, data, headers={"Referer": url}, allow_redirects=False)


def test_the_completion_code_needs_real_work_not_one_training_pair(live_server, crowd_campaign):
    session = requests.Session()
    judge = join_as(session, live_server.url, "crowd", "lazy")
    csrf_post(session, f"{live_server.url}/j/crowd/{judge.token}/level/", {"english_level": "good"})
    csrf_post(session, f"{live_server.url}/j/crowd/{judge.token}/guidelines/", {})
    page = session.get(f"{live_server.url}/j/crowd/{judge.token}/")
    csrf_post_answer(session, live_server.url, judge, re.search(r'name="assignment" value="(\d+)"', page.text).group(1))
    Campaign.objects.filter(pk=crowd_campaign.pk).update(is_open=False)
    thanks = session.get(f"{live_server.url}/j/crowd/{judge.token}/thanks/")
    assert thanks.status_code == 200 and "SECRET-CODE-42" not in thanks.text
    # A judge who did the work gets it.
    Campaign.objects.filter(pk=crowd_campaign.pk).update(is_open=True)
    worker = requests.Session()
    done = join_as(worker, live_server.url, "crowd", "worker")
    answer_everything(worker, live_server.url, done)
    assert "SECRET-CODE-42" in worker.get(f"{live_server.url}/j/crowd/{done.token}/thanks/").text
    assert Judgment.objects.filter(judge=done, is_training=False).count() == 2


def test_the_english_level_is_locked_once_real_judging_starts(live_server, crowd_campaign):
    session = requests.Session()
    judge = join_as(session, live_server.url, "crowd", "p")
    answer_everything(session, live_server.url, judge)
    response = csrf_post(session, f"{live_server.url}/j/crowd/{judge.token}/level/", {"english_level": "native"})
    judge.refresh_from_db()
    assert response.status_code == 409 and judge.english_level == "good"


def test_once_joined_no_url_carries_the_token(live_server, crowd_campaign):
    """Access logs and browser history see /j/<slug>/me/...: the cookie names the judge, not the path."""
    session = requests.Session()
    judge = join_as(session, live_server.url, "crowd", "walker")
    visited = []

    def follow(response):
        while response.is_redirect:
            visited.append(response.headers["Location"])
            response = session.get(live_server.url + response.headers["Location"], allow_redirects=False)
        return response

    own = f"{live_server.url}/j/crowd/me"
    follow(csrf_post(session, f"{own}/level/", {"english_level": "good"}))
    follow(csrf_post(session, f"{own}/guidelines/", {}))
    page = follow(session.get(f"{own}/", allow_redirects=False))
    assert page.status_code == 200 and "assignment" in page.text
    assert visited and all(judge.token not in url for url in visited), visited
    # Every link and form of the page uses the cookie path; only the resume link, meant to be kept, has the token.
    targets = re.findall(r'(?:href|action|hx-post)="([^"]+)"', page.text)
    with_token = [target for target in targets if judge.token in target]
    assert with_token == [f"/j/crowd/{judge.token}/"], with_token
    # Without the cookie, the cookie path names no judge.
    assert requests.get(f"{own}/", allow_redirects=False).status_code == 404
