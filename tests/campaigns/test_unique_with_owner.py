"""Every ModelForm validates the uniqueness its model declares, the fields the view sets included (issue 48):
a clash is a form error, never an IntegrityError (HTTP 500)."""

import importlib
import pkgutil

from django import forms
from django.urls import reverse

from campaigns.forms import UniqueWithItsOwner
from generation.models import PromptTemplate

APPS = ("campaigns", "annotation", "scoring", "generation", "reports")


def model_forms():
    """Every ModelForm class the project's apps define (their `forms` modules and packages)."""
    found = set()
    for app in APPS:
        for name in [f"{app}.forms", *(f"{app}.{m.name}" for m in pkgutil.iter_modules([app]) if m.name == "forms")]:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError:
                continue
            found |= {
                value
                for value in vars(module).values()
                if isinstance(value, type) and issubclass(value, forms.ModelForm) and value.__module__ == name
            }
    return sorted(found, key=lambda form: form.__name__)


def test_every_model_form_checks_the_uniqueness_of_the_fields_it_does_not_show():
    found = model_forms()
    assert {form.__name__ for form in found} >= {"PromptTemplateForm", "CampaignForm", "ProtocolForm"}
    for form in found:
        if form is UniqueWithItsOwner:
            continue
        assert issubclass(form, UniqueWithItsOwner), form.__name__


def test_a_template_named_like_another_of_the_campaign_is_a_form_error(client, researcher, campaign):
    PromptTemplate.objects.create(campaign=campaign, name="mine", turns=[{"role": "user", "content": "{source}"}])
    client.force_login(researcher)
    response = client.post(
        reverse("generation-create-template", args=[campaign.slug]),
        {"name": "mine", "system": "", "turns_text": "user: Paraphrase: {source}"},
    )
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    assert PromptTemplate.objects.filter(campaign=campaign, name="mine").count() == 1


def test_the_same_name_in_another_campaign_is_fine(client, researcher, campaign):
    from campaigns.models import Campaign

    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    PromptTemplate.objects.create(campaign=other, name="mine", turns=[{"role": "user", "content": "{source}"}])
    client.force_login(researcher)
    response = client.post(
        reverse("generation-create-template", args=[campaign.slug]),
        {"name": "mine", "system": "", "turns_text": "user: Paraphrase: {source}"},
    )
    assert response.status_code == 302
    assert PromptTemplate.objects.filter(name="mine").count() == 2
