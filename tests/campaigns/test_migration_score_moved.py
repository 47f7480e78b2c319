"""A database made while scores lived in the scoring app migrates with every score, id and permission kept."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import IntegrityError, connection
from django.db.migrations.executor import MigrationExecutor

from campaigns.models import Score
from reports import data_version

# The leaves of main before the move, when Score was the scoring app's.
BEFORE_THE_MOVE = [("campaigns", "0017_pair_tokenisation"), ("scoring", "0005_score_failure_and_finite_value")]


@pytest.mark.django_db(transaction=True)
def test_every_score_and_its_content_type_follow_the_model_to_campaigns():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE_THE_MOVE)
        old = executor.loader.project_state(BEFORE_THE_MOVE).apps
        OldScore = old.get_model("scoring", "Score")
        assert OldScore._meta.db_table == "scoring_score"
        campaign = old.get_model("campaigns", "Campaign").objects.create(slug="old", name="Old")
        pair = old.get_model("campaigns", "Pair").objects.create(campaign=campaign, source="A.", hypothesis="B.")
        kept = OldScore.objects.create(pair=pair, metric="lev", signature="lev:v1", value=0.25, details={"why": 1})
        old_type_pk = ContentType.objects.get_or_create(app_label="scoring", model="score")[0].pk
    finally:
        # Forward as an operator does: `migrate`'s post-migrate step remakes the data version's triggers.
        call_command("migrate", verbosity=0)
    assert data_version.missing_triggers(connection) == []
    ContentType.objects.clear_cache()
    score = Score.objects.get(pk=kept.pk)
    assert (score.pair_id, score.metric, score.signature, score.value, score.details) == (
        pair.pk, "lev", "lev:v1", 0.25, {"why": 1}
    )  # fmt: skip
    assert ContentType.objects.get_for_model(Score).pk == old_type_pk
    assert not ContentType.objects.filter(app_label="scoring", model="score").exists()
    # The table's constraints came along: a second score of the same pair, metric and signature is refused.
    with pytest.raises(IntegrityError):
        Score.objects.create(pair_id=pair.pk, metric="lev", signature="lev:v1", value=0.5)
