"""Generation runs: real generation with the embedded SmolLM2, cancellation, crash-resume, bad input."""

import base64
import json

import pytest
from django.core.exceptions import ValidationError

from generation import llm
from generation.errors import GenerationError
from generation.models import GenerationOutput, GenerationRun, GenerationSource, PromptTemplate, create_run
from generation.tasks import generate_batch, record_speed, send_next_batch, start_run
from generation.templates import BUILTIN_TEMPLATES
from parasol import queues
from parasol.celery import app as celery_app
from tests import servers

pytestmark = pytest.mark.django_db

SOURCES = ["The cat sleeps on the sofa.", "It is raining today.", "She reads a good book."]


class FakeGenerator:
    """Answers every prompt with a labelled paraphrase of its last line; records what it was asked."""

    revision = "fake"

    def __init__(self, fail_with=None, answer=None):
        self.calls, self.fail_with, self.answer, self.count = [], fail_with, answer, 0

    def render(self, messages):
        return messages[-1]["content"]

    def generate(self, prompts, *, decoding, n, seed):
        if self.fail_with:
            raise self.fail_with
        self.calls.append(list(prompts))
        return [[(self.answer or self._paraphrase(prompt), True) for _ in range(n)] for prompt in prompts]

    def _paraphrase(self, prompt):
        self.count += 1
        return f'B: "So, {prompt[4:-1]} ({self.count})"'


@pytest.fixture
def fake(monkeypatch):
    generator = FakeGenerator()
    monkeypatch.setattr(llm, "get_generator", lambda model: generator)
    return generator


def source_pks(run):
    return list(run.sources.values_list("pk", flat=True))


def test_it_generates_pairs_with_provenance_using_the_embedded_model(campaign):
    run = create_run(campaign, sources=SOURCES, templates=["naive"], max_new_tokens=16)
    assert generate_batch(run.pk, source_pks(run)) == 3
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.DONE and run.started_at and run.finished_at
    outputs = list(run.outputs.select_related("source", "pair"))
    assert len(outputs) == 3 and all(output.raw_output for output in outputs)
    accepted = [output for output in outputs if output.accepted]
    assert accepted, [output.raw_output for output in outputs]
    for output in accepted:
        pair = output.pair
        assert (pair.source, pair.hypothesis, pair.corpus) == (output.source.text, output.text, "LLM")
        assert pair.metadata["generator"] == "embedded"
        assert pair.metadata["template"] == "naive"
        assert pair.metadata["decoding"] == {"strategy": "greedy", "max_new_tokens": 16}
        assert pair.metadata["seed"] == output.seed
        assert pair.metadata["raw_output"] == output.raw_output
        assert pair.metadata["generation_run"] == run.pk
        assert pair.metadata["source_id"] == f"s{output.source.position}"
    for output in outputs:
        if not output.accepted:
            assert output.reject_reason and output.pair is None
    # The task runs again (a redelivery): nothing new.
    assert generate_batch(run.pk, source_pks(run)) == 0
    assert run.outputs.count() == 3 and campaign.pairs.count() == len(accepted)
    assert run.progress()["pairs"] == len(accepted)


def test_it_renders_the_chat_through_the_models_chat_template():
    tokenizer = llm.chat_tokenizer("embedded")
    text = llm.render_chat(tokenizer, BUILTIN_TEMPLATES["naive-system"].messages("Hi there."))
    assert text.startswith("<|im_start|>system\nYou have to transform")
    assert text.endswith('A: "Hi there."<|im_end|>\n<|im_start|>assistant\n')


def test_it_stops_between_batches_once_cancelled(campaign, fake):
    run = create_run(campaign, sources=SOURCES, templates=["naive"], batch_size=1)
    first, second, third = run.missing_source_batches()
    assert generate_batch(run.pk, first) == 1
    assert run.cancel()
    assert generate_batch(run.pk, second) == 0
    generate_batch(run.pk, third)
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.CANCELLED and run.finished_at
    assert run.outputs.count() == 1 and campaign.pairs.count() == 1
    assert not run.cancel(), "a cancelled run cannot be cancelled again"


def test_it_stops_between_templates_when_cancelled_mid_task_and_keeps_what_it_made(campaign, monkeypatch):
    class CancellingGenerator(FakeGenerator):
        def generate(self, prompts, **options):
            GenerationRun.objects.get().cancel()  # the researcher clicks Cancel while the batch runs
            return super().generate(prompts, **options)

    fake = CancellingGenerator()
    monkeypatch.setattr(llm, "get_generator", lambda model: fake)
    run = create_run(campaign, sources=SOURCES[:2], templates=["naive", "vulgar"])
    for _ in range(2):
        generate_batch(run.pk, source_pks(run))
    assert len(fake.calls) == 1 and set(run.outputs.values_list("template", flat=True)) == {"naive"}
    assert campaign.pairs.count() == 2 and not run.outputs.filter(pair__isnull=True).exists()
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.CANCELLED


def test_it_resumes_after_a_crash_without_duplicating_outputs_or_pairs(campaign, fake):
    run = create_run(campaign, sources=SOURCES[:2], templates=["naive", "vulgar"])
    first = run.sources.get(position=1)
    # The worker died after storing one output and before importing it as a pair.
    GenerationOutput.objects.create(
        run=run, source=first, template="naive", raw_output='B: "Crashed."', text="Crashed.", accepted=True
    )
    for _ in range(2):
        generate_batch(run.pk, source_pks(run))
    assert run.outputs.count() == 4
    assert sorted(run.outputs.values_list("source__position", "template")) == [
        (1, "naive"),
        (1, "vulgar"),
        (2, "naive"),
        (2, "vulgar"),
    ]
    assert campaign.pairs.count() == 4 and not run.outputs.filter(pair__isnull=True).exists()
    assert [len(call) for call in fake.calls] == [1, 2], "only the missing (source, template) were generated"
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.DONE


def test_it_makes_several_candidates_per_source_when_sampling(campaign, fake):
    run = create_run(campaign, sources=SOURCES[:1], templates=["naive"], decoding="sampling", candidates=3, seed=7)
    run.run_inline()
    assert list(run.outputs.values_list("candidate", flat=True)) == [0, 1, 2]
    metadata = campaign.pairs.first().metadata
    assert metadata["decoding"] == {
        "strategy": "sampling",
        "max_new_tokens": 64,
        "temperature": 0.7,
        "top_p": 0.9,
        "candidates": 3,
    }
    assert metadata["seed"] == run.batch_seed("naive", 1)


def queued_generation_args():
    """The arguments of the tasks waiting on queue `generation`, as a worker would read them from Redis."""
    raw = queues.client().lrange(queues.GENERATION, 0, -1)
    return [json.loads(base64.b64decode(json.loads(message)["body"]))[0] for message in reversed(raw)]


def test_it_queues_its_batches_after_commit_one_turn_at_a_time(
    campaign, fake, django_capture_on_commit_callbacks, settings
):
    settings.PARASOL_GENERATION_BATCHES_PER_RUN = 1
    old = celery_app.conf.broker_url, celery_app.conf.result_backend
    with servers.redis_server() as url:
        servers.use_broker(url, results=url)
        try:
            with django_capture_on_commit_callbacks(execute=True):
                run = start_run(campaign, sources=SOURCES, templates=["naive"], batch_size=2)
                assert queued_generation_args() == []  # nothing before the commit
            ids = source_pks(run)
            # One batch of the run at a time; the model's speed is unknown yet, so it holds one source.
            assert queued_generation_args() == [[run.pk, ids[:1]]]
            record_speed(run.model, 100, 1.0)  # what the first batch's task does as it ends...
            send_next_batch(run.pk)  # ...then it queues the next, sized by time: at most batch_size
            assert queued_generation_args() == [[run.pk, ids[:1]], [run.pk, ids[1:]]]
            send_next_batch(run.pk)
            assert len(queued_generation_args()) == 2  # nothing left to hand out
        finally:
            servers.use_broker(*old)


def test_it_rejects_an_output_that_repeats_an_accepted_one_for_the_same_source(campaign, monkeypatch):
    fake = FakeGenerator(answer='B: "The same words."')
    monkeypatch.setattr(llm, "get_generator", lambda model: fake)
    run = create_run(campaign, sources=SOURCES[:1], templates=["naive", "vulgar"], decoding="sampling", candidates=2)
    run.run_inline()
    assert list(run.outputs.values_list("template", "candidate", "accepted", "reject_reason")) == [
        ("naive", 0, True, ""),
        ("naive", 1, False, "duplicate"),
        ("vulgar", 0, False, "duplicate"),
        ("vulgar", 1, False, "duplicate"),
    ]
    assert campaign.pairs.count() == 1


def test_it_records_a_failure_with_its_message(campaign, monkeypatch):
    monkeypatch.setattr(
        llm, "get_generator", lambda model: FakeGenerator(fail_with=GenerationError("chat template refuses"))
    )
    run = create_run(campaign, sources=SOURCES[:1], templates=["naive"])
    for _ in range(2):
        assert generate_batch(run.pk, source_pks(run)) == 0
    run.refresh_from_db()
    assert run.status == GenerationRun.Status.FAILED and "chat template refuses" in run.error


def test_it_skips_a_deleted_run():
    assert generate_batch(999_999, [1]) == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"templates": ["nope"]}, "unknown template 'nope'; known templates: naive, naive-system, vulgar, paratag"),
        ({"templates": []}, "choose at least one template"),
        ({"sources": ["", "  "]}, "no sources"),
        ({"model": "no-such-org/no-such-model"}, "unknown model 'no-such-org/no-such-model'"),
        ({"candidates": 2}, "greedy decoding gives one candidate per source"),
        ({"max_new_tokens": 0}, "max_new_tokens: Ensure this value is greater than or equal to 1."),
    ],
)
def test_it_rejects_bad_input_with_a_clear_message(campaign, options, message):
    options = {"sources": SOURCES, "templates": ["naive"], **options}
    with pytest.raises(GenerationError) as error:
        create_run(campaign, **options)
    assert message in str(error.value)
    assert not GenerationRun.objects.exists()


def test_it_uses_a_campaign_template_and_rejects_one_without_source(campaign, fake):
    template = PromptTemplate(campaign=campaign, name="short", turns=[{"role": "user", "content": 'A: "x"'}])
    with pytest.raises(ValidationError, match=r"no \{source\} placeholder"):
        template.full_clean()
    template.turns = [{"role": "user", "content": 'Paraphrase: "{source}"'}]
    template.full_clean()
    template.save()
    run = create_run(campaign, sources=SOURCES[:1], templates=["short"])
    run.run_inline()
    assert fake.calls == [['Paraphrase: "The cat sleeps on the sofa."']]
    # Editing the template later does not change what the run recorded.
    template.turns = [{"role": "user", "content": "{source}"}]
    template.save()
    run.refresh_from_db()
    assert run.prompts["short"]["turns"][0]["content"] == 'Paraphrase: "{source}"'


def test_its_loading_errors_name_the_generation_setting(settings, tmp_path):
    # The chat-model resolver and loader are shared with ParaPLUIE: each caller's messages name its own setting.
    settings.GENERATION_MODELS = {"empty": str(tmp_path), "gone": str(tmp_path / "missing")}
    for model in ["empty", "gone"]:
        with pytest.raises(GenerationError) as error:
            llm.Generator(model)
        assert f"model {model!r}" in str(error.value) and "GENERATION_MODELS" in str(error.value)
        assert "PARAPLUIE" not in str(error.value)


def test_it_gives_a_source_its_external_id_as_public_id_else_its_position():
    assert GenerationSource(position=3, text="x", external_id="row-7").public_id == "row-7"
    assert GenerationSource(position=3, text="x").public_id == "s3"
