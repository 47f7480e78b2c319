# Scores move from the scoring app to campaigns (they are facts about pairs, read by generation and
# reports as well as written by scoring): the model's state only. The table keeps its name
# (`scoring_score`, Meta.db_table), its rows, indexes, constraints and the data version's triggers.

import django.db.models.deletion
from django.db import migrations, models


def content_type_follows(apps, schema_editor, old="scoring", new="campaigns"):
    """The score's content type keeps its id (permissions and admin history follow the model)."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    if not ContentType.objects.filter(app_label=new, model="score").exists():
        ContentType.objects.filter(app_label=old, model="score").update(app_label=new)


def content_type_back(apps, schema_editor):
    content_type_follows(apps, schema_editor, old="campaigns", new="scoring")


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0017_pair_tokenisation"),
        ("scoring", "0005_score_failure_and_finite_value"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name="Score",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("metric", models.CharField(max_length=64)),
                        (
                            "signature",
                            models.CharField(
                                help_text="Implementation version, model, template, tokenisation.", max_length=500
                            ),
                        ),
                        ("value", models.FloatField()),
                        ("details", models.JSONField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "pair",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="scores", to="campaigns.pair"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "scoring_score",
                        "ordering": ["pair", "metric"],
                        "indexes": [
                            models.Index(fields=["metric", "signature", "pair", "value"], name="score_column"),
                            models.Index(
                                condition=models.Q(("details__isnull", False)),
                                fields=["metric", "signature"],
                                name="score_details_kept",
                            ),
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("pair", "metric", "signature"), name="one_score_per_pair_metric_signature"
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("value__gte", -1.7976931348623157e308), ("value__lte", 1.7976931348623157e308)
                                ),
                                name="score_value_finite",
                            ),
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_type_follows, content_type_back),
    ]
