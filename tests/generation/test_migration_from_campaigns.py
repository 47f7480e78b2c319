"""A database made before generation became its own app migrates with every row, id and link kept."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from generation.models import GenerationOutput, GenerationRun, GenerationSource, PromptTemplate, create_run
from reports import data_version

# The campaigns leaf of main before the move, when the generation models lived in campaigns.
BEFORE_THE_MOVE = [("campaigns", "0005_campaign_shared_with")]


def migrate(targets=None):
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor


def fill_the_old_tables(apps):
    """A campaign with a run, its sources and outputs (one made a pair), through the historical models."""
    user = apps.get_model("auth", "User").objects.create(username="old-researcher", is_staff=True)
    campaign = apps.get_model("campaigns", "Campaign").objects.create(slug="old", name="Old", created_by=user)
    pair = apps.get_model("campaigns", "Pair").objects.create(
        campaign=campaign, external_id="gen1-1-naive-0", source="The cat sleeps.", hypothesis="The cat is asleep."
    )
    apps.get_model("campaigns", "PromptTemplate").objects.create(
        campaign=campaign, name="mine", turns=[{"role": "user", "content": 'A: "{source}"'}], created_by=user
    )
    run = apps.get_model("campaigns", "GenerationRun").objects.create(
        campaign=campaign, templates=["naive"], prompts={"naive": {"turns": []}}, status="done", created_by=user
    )
    Source = apps.get_model("campaigns", "GenerationSource")
    first = Source.objects.create(run=run, position=1, text="The cat sleeps.", external_id="s-a")
    second = Source.objects.create(run=run, position=2, text="It rains.")
    Output = apps.get_model("campaigns", "GenerationOutput")
    Output.objects.create(
        run=run,
        source=first,
        template="naive",
        raw_output='B: "The cat is asleep."',
        text="The cat is asleep.",
        accepted=True,
        pair=pair,
        seed=42,
        generator_revision="sha256:abc",
    )
    Output.objects.create(
        run=run, source=second, template="naive", raw_output="It rains.", text="It rains.", reject_reason="copy"
    )
    return campaign, run


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_generation_row_when_the_models_move_to_their_app():
    run_type = ContentType.objects.get_for_model(GenerationRun)
    try:
        executor = migrate(BEFORE_THE_MOVE)
        old_apps = executor.loader.project_state(BEFORE_THE_MOVE).apps
        assert ContentType.objects.filter(app_label="campaigns", model="generationrun", pk=run_type.pk).exists()
        campaign, old_run = fill_the_old_tables(old_apps)
    finally:
        # Forward as an operator does (`migrate`): its post-migrate step makes again the data version triggers that
        # SQLite's table rebuilds on the way dropped; the executor alone left the test database without them,
        # and every later server of this process refused to start.
        call_command("migrate", verbosity=0)
    assert data_version.missing_triggers(connection) == []
    ContentType.objects.clear_cache()
    run = GenerationRun.objects.get(pk=old_run.pk)
    assert run.campaign.slug == "old" and run.status == "done" and run.created_by.username == "old-researcher"
    assert list(run.sources.values_list("position", "text", "external_id")) == [
        (1, "The cat sleeps.", "s-a"),
        (2, "It rains.", ""),
    ]
    outputs = list(run.outputs.order_by("source__position"))
    assert [(o.text, o.accepted, o.reject_reason) for o in outputs] == [
        ("The cat is asleep.", True, ""),
        ("It rains.", False, "copy"),
    ]
    assert outputs[0].pair.external_id == "gen1-1-naive-0" and outputs[0].seed == 42
    assert run.progress()["reject_reasons"] == {"copy of the source": 1}
    assert PromptTemplate.objects.get(campaign__slug="old").name == "mine"
    assert (GenerationSource.objects.count(), GenerationOutput.objects.count()) == (2, 2)
    # Permissions and admin history follow the models: their content type kept its id.
    assert ContentType.objects.get_for_model(GenerationRun).pk == run_type.pk
    assert not ContentType.objects.filter(app_label="campaigns", model="generationrun").exists()
    # The tables go on: new rows get new ids after the old ones (PostgreSQL's sequences included).
    new = create_run(run.campaign, sources=["A new sentence."], templates=["mine"])
    assert new.pk > run.pk and new.sources.get().pk > max(s.pk for s in run.sources.all())
