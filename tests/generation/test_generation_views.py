"""Researcher pages for generation runs and templates: access, creating a run, progress, preview."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from generation import llm, templates
from generation.llm import chat_tokenizer as real_chat_tokenizer
from generation.models import GenerationRun, GenerationSource, PromptTemplate, create_run
from metrics.loading import embedded_smollm2_path
from tests.factories import add_pairs

pytestmark = pytest.mark.django_db


class FakeTokenizer:
    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        return "".join(f"[{m['role']}]{m['content']}" for m in messages) + "[assistant]"


@pytest.fixture
def researcher_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.fixture(autouse=True)
def fake_tokenizer(monkeypatch):
    """The preview's real tokenizer is tested in test_generation_run; here it only needs to render."""
    monkeypatch.setattr(llm, "chat_tokenizer", lambda model: FakeTokenizer())


@pytest.fixture
def run(campaign):
    return create_run(campaign, sources=["One sentence.", "Another one."], templates=["naive"])


def urls(campaign, run):
    return [
        ("get", reverse("generation-list-runs", args=[campaign.slug])),
        ("get", reverse("generation-create-run", args=[campaign.slug])),
        ("post", reverse("generation-create-run", args=[campaign.slug])),
        ("get", reverse("generation-show-run", args=[campaign.slug, run.pk])),
        ("post", reverse("generation-cancel-run", args=[campaign.slug, run.pk])),
        ("post", reverse("generation-resume-run", args=[campaign.slug, run.pk])),
        ("post", reverse("generation-select-run", args=[campaign.slug, run.pk])),
        ("get", reverse("generation-create-template", args=[campaign.slug])),
        ("get", reverse("generation-preview-template", args=[campaign.slug])),
    ]


def test_it_sends_anonymous_users_and_outsiders_to_the_login_page(client, campaign, run, outsider):
    for user in (None, outsider):
        if user:
            client.force_login(user)
        for method, url in urls(campaign, run):
            response = getattr(client, method)(url)
            assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.QUEUED


def test_it_creates_a_run_from_typed_sources(
    researcher_client, campaign, researcher, django_capture_on_commit_callbacks
):
    url = reverse("generation-create-run", args=[campaign.slug])
    assert researcher_client.get(url).status_code == 200
    data = {
        "templates": ["naive", "vulgar"],
        "sources_from": "text",
        "sources_text": "The cat sleeps.\n\nIt rains.\nThe cat sleeps.\n",
        "model": "embedded",
        "decoding": "sampling",
        "temperature": 0.8,
        "top_p": 0.95,
        "max_new_tokens": 32,
        "seed": 3,
        "candidates": 2,
        "corpus": "LLM",
    }
    with django_capture_on_commit_callbacks() as callbacks:
        response = researcher_client.post(url, data)
    run = GenerationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert list(run.sources.values_list("text", flat=True)) == ["The cat sleeps.", "It rains."]
    assert (run.templates, run.candidates, run.created_by) == (["naive", "vulgar"], 2, researcher)
    assert len(callbacks) == 1, "queued once the transaction commits"


def test_it_creates_a_run_from_a_csv_file_or_the_campaigns_pairs(researcher_client, campaign):
    add_pairs(campaign, 3)
    url = reverse("generation-create-run", args=[campaign.slug])
    common = {"templates": ["naive"], "model": "embedded", "decoding": "greedy", "temperature": 0.7}
    common.update(top_p=0.9, max_new_tokens=16, seed=0, candidates=1, corpus="LLM")
    upload = SimpleUploadedFile("s.csv", b"id,source\nx1,First one.\nx2,Second one.\n")
    researcher_client.post(url, {**common, "sources_from": "file", "sources_file": upload})
    researcher_client.post(url, {**common, "sources_from": "campaign"})
    from_file, from_pairs = GenerationRun.objects.order_by("pk")
    assert list(from_file.sources.values_list("external_id", "text")) == [("x1", "First one."), ("x2", "Second one.")]
    assert list(from_pairs.sources.values_list("external_id", flat=True)) == ["p1", "p2", "p3"]


def test_it_shows_what_is_wrong_with_a_run(researcher_client, campaign):
    url = reverse("generation-create-run", args=[campaign.slug])
    data = {"templates": ["naive"], "sources_from": "text", "sources_text": "A sentence.", "decoding": "greedy"}
    data.update(model="no-such/model", temperature=0.7, top_p=0.9, max_new_tokens=16, seed=0, candidates=1, corpus="x")
    response = researcher_client.post(url, data)
    assert response.status_code == 200
    assert "unknown model &#x27;no-such/model&#x27;" in response.content.decode()
    response = researcher_client.post(url, {**data, "model": "embedded", "sources_text": " \n"})
    assert "no sources" in response.content.decode()
    assert not GenerationRun.objects.exists()


def test_it_answers_htmx_polling_with_the_progress_partial(researcher_client, campaign, run):
    url = reverse("generation-show-run", args=[campaign.slug, run.pk])
    page = researcher_client.get(url).content.decode()
    assert "Outputs" in page and page.count('hx-trigger="every 2s"') == 1
    assert "reload" not in page and "updates itself every 2 seconds" in page  # one refresh rule, said once
    partial = researcher_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "0/2" in partial and "<html" not in partial and "Outputs" in partial  # the outputs move with the bar
    run.cancel()
    partial = researcher_client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "cancelled" in partial and "hx-trigger" not in partial, "a finished run stops polling"


def test_it_cancels_and_resumes_a_run(researcher_client, campaign, run):
    researcher_client.post(reverse("generation-cancel-run", args=[campaign.slug, run.pk]))
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.CANCELLED
    researcher_client.post(reverse("generation-resume-run", args=[campaign.slug, run.pk]))
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.QUEUED


def test_it_hides_a_run_of_another_campaign(researcher_client, campaign, run):
    other = type(campaign).objects.create(slug="other", name="Other")
    assert researcher_client.get(reverse("generation-show-run", args=[other.slug, run.pk])).status_code == 404


def test_it_previews_a_template_as_the_researcher_types(researcher_client, campaign):
    url = reverse("generation-preview-template", args=[campaign.slug])
    htmx = {"HX-Request": "true"}
    typed = {"system": "Be brief.", "turns_text": 'user: Rephrase "{source}"', "sentence": "Dogs bark."}
    partial = researcher_client.post(url, typed, headers=htmx).content.decode()
    assert "[system]Be brief.[user]Rephrase &quot;Dogs bark.&quot;[assistant]" in partial
    assert "<html" not in partial
    missing = researcher_client.post(url, {"turns_text": "user: Rephrase this"}, headers=htmx).content.decode()
    assert "no {source} placeholder" in missing
    by_name = researcher_client.get(url, {"template": "vulgar", "sentence": "Go away."}, headers=htmx)
    assert "Go fuck yourselves." in by_name.content.decode() and "Go away." in by_name.content.decode()
    assert "<html" in researcher_client.get(url, {"template": "naive"}).content.decode()


def test_it_creates_and_edits_a_campaign_template(researcher_client, campaign):
    url = reverse("generation-create-template", args=[campaign.slug])
    assert "I&#x27;ve understood the instructions perfectly." in researcher_client.get(url).content.decode()
    bad = researcher_client.post(url, {"name": "mine", "system": "", "turns_text": "user: no placeholder"})
    assert bad.status_code == 200 and "no {source} placeholder" in bad.content.decode()
    builtin = researcher_client.post(url, {"name": "naive", "turns_text": "user: {source}"})
    assert "is a built-in template" in builtin.content.decode()
    response = researcher_client.post(url, {"name": "mine", "system": "Be kind.", "turns_text": "user: A: {source}"})
    assert response.status_code == 302
    template = PromptTemplate.objects.get()
    assert (template.system, template.turns) == ("Be kind.", [{"role": "user", "content": "A: {source}"}])
    edit = reverse("generation-edit-template", args=[campaign.slug, template.pk])
    researcher_client.post(edit, {"name": "mine", "turns_text": "user: B: {source}"})
    template.refresh_from_db()
    assert template.turns == [{"role": "user", "content": "B: {source}"}]
    assert "mine" in researcher_client.get(reverse("generation-list-runs", args=[campaign.slug])).content.decode()
    assert templates.template_names(campaign) == ["naive", "naive-system", "vulgar", "paratag", "mine"]


@pytest.mark.parametrize("model", ["/etc/shadow", "/etc/no-such-file", "../../etc/passwd"])
def test_it_refuses_a_server_path_as_the_model_and_stores_nothing(researcher_client, campaign, model, monkeypatch):
    # A path was once accepted when the file existed: the page was an oracle for the server's files.
    url = reverse("generation-create-run", args=[campaign.slug])
    data = {"templates": ["naive"], "sources_from": "text", "sources_text": "A sentence.", "decoding": "greedy"}
    data.update(model=model, temperature=0.7, top_p=0.9, max_new_tokens=16, seed=0, candidates=1, corpus="x")
    page = researcher_client.post(url, data).content.decode()
    assert f"unknown model &#x27;{model}&#x27;: use one of embedded" in page
    assert not GenerationRun.objects.exists() and not GenerationSource.objects.exists()
    monkeypatch.setattr(llm, "chat_tokenizer", real_chat_tokenizer)
    preview = reverse("generation-preview-template", args=[campaign.slug])
    partial = researcher_client.get(preview, {"template": "naive", "model": model}, headers={"HX-Request": "true"})
    assert partial.status_code == 200 and f"unknown model &#x27;{model}&#x27;" in partial.content.decode()


def test_it_runs_a_model_named_in_the_settings(researcher_client, campaign, settings):
    settings.GENERATION_MODELS = {"smol": str(embedded_smollm2_path())}
    url = reverse("generation-create-run", args=[campaign.slug])
    data = {"templates": ["naive"], "sources_from": "text", "sources_text": "A sentence.", "decoding": "greedy"}
    data.update(model="smol", temperature=0.7, top_p=0.9, max_new_tokens=16, seed=0, candidates=1, corpus="x")
    assert "smol" in researcher_client.get(url).content.decode()  # listed beside the field
    assert researcher_client.post(url, data).status_code == 302
    assert GenerationRun.objects.get().model == "smol"
    settings.GENERATION_MODELS = {"gone": "/no/such/model-directory"}
    page = researcher_client.post(url, {**data, "model": "gone"}).content.decode()
    assert "model &#x27;gone&#x27; cannot be used" in page and "GENERATION_MODELS" in page
    assert GenerationRun.objects.count() == 1
