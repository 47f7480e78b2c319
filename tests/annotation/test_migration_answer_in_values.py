"""Migration 0006: every 5-way answer moves from `Judgment.label` into `Judgment.values["answer"]`, and back."""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from annotation.models import Judgment
from reports import data_version

BEFORE, AFTER = "0005_active_choice", "0006_judgment_answer_in_values"


def migrate(annotation):
    """Every app at its latest migration but `annotation`, at that one; the historical models of that state."""
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    targets = [(app, annotation if app == "annotation" else name) for app, name in leaves]
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def judgments_with_labels(apps):
    """Four judgments through the historical models: a 5-way answer alone, one beside a tagging, a criteria
    answer (no label), and a Don't know."""
    campaign = apps.get_model("campaigns", "Campaign").objects.create(slug="old", name="Old")
    Pair = apps.get_model("campaigns", "Pair")
    judge = apps.get_model("annotation", "Judge").objects.create(campaign=campaign, consented_at=timezone.now())
    stored = [
        ("same_meaning", {}),
        ("mostly_similar", {"source": [1], "hypothesis": []}),
        ("", {"adequacy": 5, "fluency": 4, "dissimilarity": 2, "overall": 3}),
        ("dont_know", {}),
    ]
    for position, (label, values) in enumerate(stored, start=1):
        pair = Pair.objects.create(campaign=campaign, external_id=f"p{position}", source="A.", hypothesis="B.")
        assignment = apps.get_model("annotation", "Assignment").objects.create(
            judge=judge, pair=pair, position=position, top="source"
        )
        apps.get_model("annotation", "Judgment").objects.create(
            assignment=assignment, judge=judge, pair=pair, label=label, values=values
        )
    return stored


@pytest.mark.django_db(transaction=True)
def test_it_moves_every_label_into_the_values_and_back():
    try:
        stored = judgments_with_labels(migrate(BEFORE))
        migrate(AFTER)
        assert list(Judgment.objects.order_by("pk").values_list("values", flat=True)) == [
            {"answer": "same_meaning"},
            {"answer": "mostly_similar", "source": [1], "hypothesis": []},
            {"adequacy": 5, "fluency": 4, "dissimilarity": 2, "overall": 3},
            {"answer": "dont_know"},
        ]
        # Back: the column again, holding each answer, and the values as they were.
        old = migrate(BEFORE).get_model("annotation", "Judgment")
        assert list(old.objects.order_by("pk").values_list("label", "values")) == stored
    finally:
        # Forward as an operator does (`migrate`): its post-migrate step makes again the data version triggers
        # that SQLite's table rebuilds dropped (the executor alone leaves the test database without them).
        call_command("migrate", verbosity=0)
    assert data_version.missing_triggers(connection) == []
    assert Judgment.objects.filter(values__answer="same_meaning").count() == 1
    assert "label" not in {field.name for field in Judgment._meta.get_fields()}
