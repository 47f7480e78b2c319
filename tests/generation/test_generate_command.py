"""The generate command: in this process (--inline) with the embedded model, and through a real worker."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from campaigns.models import Campaign
from generation import llm
from generation.llm import chat_tokenizer
from generation.models import GenerationRun, PromptTemplate
from generation.tasks import generate_batch
from tests import servers
from tests.generation.test_generation_run import FakeGenerator
from tests.servers import use_broker


@pytest.fixture
def sources_file(tmp_path):
    path = tmp_path / "sources.txt"
    path.write_text("It is raining today.\nThe cat sleeps on the sofa.\n")
    return path


@pytest.mark.django_db
def test_it_creates_the_campaign_and_generates_inline(sources_file, capsys, monkeypatch):
    # Real generation with the embedded model is tested in test_generation_run; here, the command's plumbing.
    monkeypatch.setattr(llm, "get_generator", lambda model: FakeGenerator())
    args = ["generate", "llm", str(sources_file), "--template", "naive", "--max-new-tokens", "16", "--inline"]
    call_command(*args, "--create", "--sampling", "--n", "2", "--seed", "5")
    out = capsys.readouterr().out
    campaign = Campaign.objects.get(slug="llm")
    run = GenerationRun.objects.get()
    assert (run.status, run.decoding, run.candidates, run.seed) == ("done", "sampling", 2, 5)
    assert f"Run {run.pk} done: 4 outputs, 4 accepted (4 pairs in llm), 0 rejected." in out
    assert campaign.real_pairs.count() == 4 and campaign.training_pairs.count() == 5
    for pair in campaign.real_pairs:
        assert pair.metadata["generator"] == "embedded" and pair.metadata["generation_run"] == run.pk
    call_command(*args)  # a second run of the same file makes a second run, with its own pairs
    assert campaign.real_pairs.count() == 6


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--template", "nope"],
            "unknown template 'nope'; known templates: naive, naive-system, vulgar, paratag, broken",
        ),
        (["--template", "broken"], "template 'broken': the template has no {source} placeholder"),
        (["--template", "naive", "--model", "/no/such/model"], "unknown model '/no/such/model'"),
        (["--template", "naive", "--model", "/etc/shadow"], "unknown model '/etc/shadow': use one of embedded"),
        (["--template", "naive", "--n", "2"], "greedy decoding gives one candidate per source"),
    ],
)
def test_it_refuses_bad_input_with_a_clear_message(campaign, sources_file, extra, message):
    # A template saved without validation (e.g. from a shell) is still refused when used.
    PromptTemplate.objects.create(campaign=campaign, name="broken", turns=[{"role": "user", "content": "Hi"}])
    with pytest.raises(CommandError) as error:
        call_command("generate", "demo", str(sources_file), *extra, "--inline")
    assert message in str(error.value)
    assert not GenerationRun.objects.exists()


@pytest.mark.django_db
def test_it_needs_an_existing_campaign_or_create_and_a_file(sources_file, tmp_path):
    with pytest.raises(CommandError, match="no campaign with slug 'ghost' \\(use --create"):
        call_command("generate", "ghost", str(sources_file), "--template", "naive")
    with pytest.raises(CommandError, match="no such file"):
        call_command("generate", "ghost", str(tmp_path / "none.txt"), "--template", "naive", "--create")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A tiny random Llama with the embedded tokenizer: a real model directory the worker loads in a second."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = chat_tokenizer("embedded")
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
    )
    path = tmp_path_factory.mktemp("models") / "tiny"
    LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_it_waits_for_a_real_worker_and_a_rerun_duplicates_nothing(sources_file, tiny_model, capsys, settings):
    old = celery_app_urls()
    settings.GENERATION_MODELS = {"tiny": str(tiny_model)}  # the worker gets the same setting below
    with servers.redis_server() as url:
        use_broker(url, results=url)
        models = {"GENERATION_MODELS": f"tiny={tiny_model}"}
        worker = servers.start_worker(url, servers.database_env(connection), queues="generation", extra_env=models)
        try:
            args = ["generate", "live", str(sources_file), "--template", "naive", "--template", "vulgar"]
            call_command(*args, "--create", "--model", "tiny", "--max-new-tokens", "4", "--timeout", "120")
        finally:
            servers.stop(worker)
            use_broker(*old)
    run = GenerationRun.objects.get()
    assert run.status == "done", run.error
    assert run.outputs.count() == 4
    assert f"Run {run.pk} done: 4 outputs" in capsys.readouterr().out
    # The batch task delivered once more (after a worker crash, say) adds nothing.
    assert generate_batch(run.pk, list(run.sources.values_list("pk", flat=True))) == 0
    assert run.outputs.count() == 4


def celery_app_urls():
    from parasol.celery import app

    return app.conf.broker_url, app.conf.result_backend
