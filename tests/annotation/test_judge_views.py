"""The judge protocol through Django's test client (no JavaScript)."""

import re

import pytest
from django.urls import reverse

from annotation.models import Assignment, Judge, Judgment
from campaigns.models import Campaign
from tests.factories import add_pairs, make_judge, remember, without_controls

LABEL_ORDER = ["very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know"]


@pytest.fixture
def open_campaign(campaign):
    add_pairs(campaign, 4)
    campaign.pairs_per_judge = 3
    campaign.save()
    return without_controls(campaign)


def start(client, campaign):
    response = client.post(reverse("annotation-show-welcome", args=[campaign.slug]), {"consent": "yes"})
    judge = Judge.objects.latest("pk")
    assert response.status_code == 302
    return judge


def item_url(judge):
    return reverse("annotation-show-item", args=[judge.campaign.slug, judge.token])


def answer(client, judge, choice="same_meaning", htmx=False):
    current = Assignment.objects.filter(judge=judge, judgment__isnull=True).order_by("position").first()
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(
        reverse("annotation-record-answer", args=[judge.campaign.slug, judge.token]),
        {"assignment": current.pk, "answer": choice, "response_ms": "1500"},
        **headers,
    )


def test_it_walks_a_judge_through_the_whole_protocol(client, open_campaign):
    judge = start(client, open_campaign)
    # English level is required before anything else.
    response = client.get(item_url(judge))
    assert response.url == reverse("annotation-ask-english-level", args=[open_campaign.slug, Judge.path_token])
    response = client.post(response.url, {})
    assert "Please choose your English level" in response.content.decode()
    client.post(
        reverse("annotation-ask-english-level", args=[open_campaign.slug, judge.token]), {"english_level": "advanced"}
    )
    response = client.get(item_url(judge))
    assert response.url == reverse("annotation-show-guidelines", args=[open_campaign.slug, Judge.path_token])
    guidelines = client.get(response.url).content.decode()
    for text in ["Very different", "Slightly similar", "Mostly similar", "Same meaning", "Don&#x27;t know"]:
        assert text in guidelines
    client.post(reverse("annotation-show-guidelines", args=[open_campaign.slug, judge.token]))
    page = client.get(item_url(judge)).content.decode()
    assert "Training" in page and "1 / 5" in page
    for _ in range(5):
        answer(client, judge)
        client.get(item_url(judge))  # the feedback's Continue
    page = client.get(item_url(judge)).content.decode()
    assert "1 / 3" in page
    for _ in range(3):
        client.get(item_url(judge))  # where the answer redirects
        response = answer(client, judge)
    assert response.url == reverse("annotation-show-thanks", args=[open_campaign.slug, Judge.path_token])
    assert "Thank you" in client.get(response.url).content.decode()
    judge.refresh_from_db()
    assert judge.english_level == "advanced" and judge.finished_at is not None
    assert Judgment.objects.filter(judge=judge, is_training=True).count() == 5
    assert Judgment.objects.filter(judge=judge, is_training=False).count() == 3


def test_it_shows_the_five_answers_in_the_protocol_order(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    page = client.get(item_url(judge)).content.decode()
    values = re.findall(r'name="answer" value="(\w+)"', page)
    assert values == LABEL_ORDER


def test_it_answers_htmx_with_the_next_pair_only(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    for _ in range(5):
        client.get(item_url(judge))
        answer(client, judge)
    client.get(item_url(judge))
    response = answer(client, judge, htmx=True)
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="item"') and "<html" not in body
    assert "2 / 3" in body


def test_each_training_answer_shows_the_expected_answer_the_judges_and_why(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    client.get(item_url(judge))
    # The default trial's second pair expects Slightly similar (the place differs).
    answer(client, judge, choice="same_meaning")
    client.get(item_url(judge))
    body = answer(client, judge, choice="same_meaning", htmx=True).content.decode()
    assert body.lstrip().startswith('<div id="item" class="item feedback"')
    expected = re.search(r'<td class="expected">(.*?)</td>', body).group(1)
    yours = re.search(r'<td class="yours">(.*?) <span', body).group(1)
    assert expected == "Slightly similar" and yours == "Same meaning" and "differs" in body
    assert "a bus is not an office" in body and 'id="continue"' in body
    # Continue shows the next training pair.
    assert "3 / 5" in client.get(item_url(judge)).content.decode()


def test_a_training_answer_as_expected_says_so(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    client.get(item_url(judge))
    body = answer(client, judge, choice="mostly_similar").content.decode()
    assert "Mostly similar or Same meaning" in body and "as expected" in body


def test_it_redirects_htmx_to_the_thanks_page_at_the_end(client, campaign):
    campaign.pairs_per_judge = 1
    campaign.save()
    add_pairs(campaign, 1)
    judge = make_judge(campaign)
    remember(client, judge)
    for _ in range(6):
        client.get(item_url(judge))
        response = answer(client, judge, htmx=True)
    assert response.headers["HX-Redirect"].endswith("/thanks/")


def test_it_escapes_sentences(client, campaign):
    campaign.pairs.create(external_id="x", source="<script>alert(1)</script> hi", hypothesis="<b>bold</b> hi")
    judge = make_judge(campaign)
    remember(client, judge)
    for _ in range(5):
        client.get(item_url(judge))
        answer(client, judge)
    page = client.get(item_url(judge)).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_it_resumes_from_the_cookie(client, open_campaign):
    judge = start(client, open_campaign)
    response = client.get(reverse("annotation-show-welcome", args=[open_campaign.slug]))
    assert response.url == reverse("annotation-show-item", args=[open_campaign.slug, Judge.path_token])
    assert judge.token not in response.url


def test_it_rejects_an_answer_to_another_judges_assignment(client, open_campaign):
    owner = make_judge(open_campaign)
    remember(client, owner)
    intruder = make_judge(open_campaign)
    client.get(item_url(owner))
    theirs = Assignment.objects.get(judge=owner)
    remember(client, intruder)
    response = client.post(
        reverse("annotation-record-answer", args=[open_campaign.slug, intruder.token]),
        {"assignment": theirs.pk, "answer": "same_meaning"},
    )
    assert response.status_code == 400
    assert b"not assigned to you" in response.content
    assert not Judgment.objects.exists()


def test_it_hides_a_judge_behind_another_campaigns_slug(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    Campaign.objects.create(slug="other", name="Other")
    assert client.get(reverse("annotation-show-item", args=["other", judge.token])).status_code == 404
    assert client.get(reverse("annotation-show-item", args=[open_campaign.slug, "forged-token"])).status_code == 404


def test_it_rejects_an_unknown_answer_clearly(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    client.get(item_url(judge))
    current = Assignment.objects.get(judge=judge)
    response = client.post(
        reverse("annotation-record-answer", args=[open_campaign.slug, judge.token]),
        {"assignment": current.pk, "answer": "maybe"},
    )
    assert response.status_code == 400
    assert "Choose one of the five answers" in response.content.decode()


def test_a_double_submission_stores_one_judgment(client, open_campaign):
    judge = make_judge(open_campaign)
    remember(client, judge)
    client.get(item_url(judge))
    current = Assignment.objects.get(judge=judge)
    url = reverse("annotation-record-answer", args=[open_campaign.slug, judge.token])
    client.post(url, {"assignment": current.pk, "answer": "same_meaning"})
    client.post(url, {"assignment": current.pk, "answer": "very_different"})
    assert list(Judgment.objects.values_list("values", flat=True)) == [{"answer": "same_meaning"}]


def test_it_requires_consent(client, open_campaign):
    response = client.post(reverse("annotation-show-welcome", args=[open_campaign.slug]), {})
    assert response.status_code == 200 and "Please tick the box" in response.content.decode()
    assert not Judge.objects.exists()


def test_an_exhausted_campaign_says_so(client, campaign):
    response = client.get(reverse("annotation-show-welcome", args=[campaign.slug]))
    assert "already has all the answers it needs" in response.content.decode()


def test_a_closed_campaign_says_so(client, open_campaign):
    open_campaign.is_open = False
    open_campaign.save()
    response = client.get(reverse("annotation-show-welcome", args=[open_campaign.slug]))
    assert "This campaign is closed" in response.content.decode()


def test_an_unknown_campaign_is_a_404(client, db):
    assert client.get("/j/nope/").status_code == 404


def test_an_imported_campaign_is_judgeable_at_once(client, db, tmp_path):
    from django.core.management import call_command

    corpus = tmp_path / "pairs.csv"
    corpus.write_text("source,hypothesis\nA cat sleeps.,A cat is sleeping.\n")
    call_command("import_pairs", "fresh", str(corpus), "--create")
    judge = start(client, Campaign.objects.get(slug="fresh"))
    judge.english_level = "native"
    judge.save()
    client.post(reverse("annotation-show-guidelines", args=["fresh", judge.token]))
    page = client.get(item_url(judge)).content.decode()
    assert "Training" in page


def test_it_rate_limits_joining_from_one_address(client, open_campaign, settings):
    settings.PARASOL_JOINS_PER_HOUR = 2
    url = reverse("annotation-show-welcome", args=[open_campaign.slug])
    for _ in range(2):
        client.cookies.clear()
        assert client.post(url, {"consent": "yes"}).status_code == 302
    client.cookies.clear()
    response = client.post(url, {"consent": "yes"})
    assert response.status_code == 429 and "try again" in response.content.decode()
    assert Judge.objects.count() == 2
    # Another address is not affected.
    client.cookies.clear()
    assert client.post(url, {"consent": "yes"}, REMOTE_ADDR="10.9.8.7").status_code == 302
