"""The judge side speaks English and French, picked from the browser or by the switch."""

from django.urls import reverse

from tests.factories import add_pairs, make_judge, remember, without_controls


def test_a_french_browser_gets_the_french_protocol(client, campaign):
    add_pairs(campaign, 1)
    without_controls(campaign)
    welcome = client.get(reverse("annotation-show-welcome", args=[campaign.slug]), HTTP_ACCEPT_LANGUAGE="fr").content
    assert "J'accepte que mes réponses anonymes" in welcome.decode()
    judge = make_judge(campaign)
    remember(client, judge)
    page = client.get(reverse("annotation-show-item", args=[campaign.slug, judge.token]), HTTP_ACCEPT_LANGUAGE="fr")
    html = page.content.decode()
    for answer in ["Très différent", "Un peu similaire", "Plutôt similaire", "Même sens", "Je ne sais pas"]:
        assert answer in html
    assert '<html lang="fr">' in html
    # The sentences themselves stay marked as English.
    assert 'id="sentence-top" lang="en"' in html


def test_the_switch_changes_the_language(client, campaign):
    add_pairs(campaign, 1)
    url = reverse("annotation-show-welcome", args=[campaign.slug])
    client.post(reverse("set_language"), {"language": "fr", "next": url})
    assert "Commencer" in client.get(url).content.decode()
    client.post(reverse("set_language"), {"language": "en", "next": url})
    assert "I agree that my anonymous answers" in client.get(url).content.decode()


def test_an_english_browser_gets_english(client, campaign):
    add_pairs(campaign, 1)
    page = client.get(reverse("annotation-show-welcome", args=[campaign.slug]), HTTP_ACCEPT_LANGUAGE="en-GB,en;q=0.9")
    assert "I agree that my anonymous answers" in page.content.decode()
