"""A campaign's LLM backend per LLM metric: chosen by name (form, API, command line), kept apart in signatures."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from campaigns.models import Campaign, Score
from metrics.backends import BackendUnavailable, parse_backends
from scoring import service
from tests.factories import add_pairs
from tests.servers import free_port


@pytest.fixture
def gone_server(settings):
    """A declared server backend that nothing answers (a port nobody listens on), no retries."""
    declared = {"base_url": f"http://127.0.0.1:{free_port()}/v1", "model": "smollm2", "retries": 0, "revision": "r1"}
    settings.PARASOL_LLM_BACKENDS = parse_backends(json.dumps({"lab": declared}))
    return "lab"


def test_two_campaigns_with_different_backends_have_their_signatures_apart(campaign, researcher, gone_server):
    other = Campaign.objects.create(slug="other", name="Other", created_by=researcher)
    other.choose_llm_backends({"parapluie_direct": gone_server})
    mine = service.scorer_for("parapluie_direct", campaign).signature()
    theirs = service.scorer_for("parapluie_direct", other).signature()
    assert mine != theirs
    assert (theirs["backend"], theirs["model"], theirs["rev"]) == ("openai-compatible", "smollm2", "r1")
    assert "backend" not in mine and mine["impl"].startswith("parasol-parapluie+transformers")
    assert "127.0.0.1" not in service.scorer_for("parapluie_direct", other).signature_string()


def test_the_default_backend_keeps_the_signature_of_before_backends(campaign):
    default = service.scorer_for("parapluie_direct", campaign)
    assert default is service.scorer_for("parapluie_direct", campaign)  # one scorer per choice
    assert default.signature() == service.scorer("parapluie_direct").signature()


@pytest.mark.parametrize(
    "choice, message",
    [
        ({"parapluie_direct": "nowhere"}, "no LLM backend is named 'nowhere'"),
        ({"bleu": "in-process"}, "'bleu' is not an LLM metric"),
        (["in-process"], "Give an object"),
    ],
)
def test_it_refuses_a_backend_or_metric_that_is_not_declared(campaign, choice, message):
    with pytest.raises(ValidationError, match=message):
        campaign.choose_llm_backends(choice) if isinstance(choice, dict) else Campaign(llm_backends=choice).full_clean(
            exclude=["slug", "name"]
        )
    campaign.refresh_from_db()
    assert campaign.llm_backends == {}


def test_the_campaign_form_saves_a_declared_backend_and_refuses_another(researcher, campaign, gone_server):
    from campaigns.forms import CampaignForm

    data = {"name": campaign.name, "slug": campaign.slug, "pairs_per_judge": 50, "overlap_target": 3}
    refused = CampaignForm({**data, "llm_backends": json.dumps({"parapluie_direct": "elsewhere"})}, instance=campaign)
    assert not refused.is_valid() and "no LLM backend is named" in str(refused.errors["llm_backends"])
    campaign.refresh_from_db()
    assert campaign.llm_backends == {}
    form = CampaignForm({**data, "llm_backends": json.dumps({"parapluie_direct": gone_server})}, instance=campaign)
    assert form.is_valid(), form.errors
    form.save()
    campaign.refresh_from_db()
    assert campaign.llm_backends == {"parapluie_direct": gone_server}


def test_the_api_saves_a_declared_backend_and_refuses_another(client, researcher, campaign, gone_server):
    client.force_login(researcher)
    url = f"/api/campaigns/{campaign.slug}/"
    bad = client.patch(url, {"llm_backends": {"parapluie_direct": "elsewhere"}}, content_type="application/json")
    assert bad.status_code == 400 and "no LLM backend is named" in bad.content.decode()
    good = client.patch(url, {"llm_backends": {"parapluie_direct": gone_server}}, content_type="application/json")
    assert good.status_code == 200, good.content
    campaign.refresh_from_db()
    assert campaign.llm_backends == {"parapluie_direct": gone_server}


def test_the_score_command_sets_the_campaigns_backend(campaign, gone_server):
    with pytest.raises(CommandError, match="no LLM backend is named 'nowhere'"):
        call_command("score", "demo", "--metrics", "lev", "--inline", "--llm-backend", "parapluie_direct=nowhere")
    call_command("score", "demo", "--metrics", "lev", "--inline", "--llm-backend", f"parapluie_direct={gone_server}")
    campaign.refresh_from_db()
    assert campaign.llm_backends == {"parapluie_direct": gone_server}


def test_a_server_that_is_down_makes_the_batch_wait_and_the_panel_say_so(client, researcher, campaign, gone_server):
    campaign.choose_llm_backends({"parapluie_direct": gone_server})
    pairs = add_pairs(campaign, 2)
    with pytest.raises(BackendUnavailable):
        service.score_pairs("parapluie_direct", [pair.pk for pair in pairs])
    assert not Score.objects.exists()
    client.force_login(researcher)
    page = client.get(reverse("scoring-show-progress", args=[campaign.slug])).content.decode()
    assert "backend &#x27;lab&#x27; is unreachable" in page
