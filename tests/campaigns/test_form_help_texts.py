"""Help texts are shown as the text they are: placeholders in angle brackets stay on the page."""

import re

import pytest
from django.urls import reverse


@pytest.fixture
def signed_in(client, researcher):
    client.force_login(researcher)
    return client


def help_texts(page):
    return re.findall(r'<span class="helptext"[^>]*>(.*?)</span>', page, re.S)


def test_the_new_campaign_form_shows_the_detectors_placeholder_as_text(signed_in):
    page = signed_in.get(reverse("campaigns-create-campaign")).content.decode()
    assert "&lt;campaign id&gt;/&lt;version&gt;" in page
    assert "<campaign id>" not in page


def test_no_help_text_of_the_researchers_forms_holds_markup(signed_in, campaign):
    pages = [
        reverse("campaigns-create-campaign"),
        reverse("annotation-edit-campaign", args=[campaign.slug]),
        reverse("annotation-upload-corpus", args=[campaign.slug]),
    ]
    for url in pages:
        texts = help_texts(signed_in.get(url).content.decode())
        assert texts, url
        assert [text for text in texts if "<" in text] == [], url


def test_the_edit_form_escapes_once(signed_in, campaign):
    page = signed_in.get(reverse("annotation-edit-campaign", args=[campaign.slug])).content.decode()
    assert "&lt;campaign id&gt;" in page and "&amp;lt;" not in page
