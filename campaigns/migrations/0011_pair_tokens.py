from django.db import migrations, models

from metrics.words import word_tokens


def store_tokens(apps, schema_editor):
    """Existing pairs get the words they are shown and tagged by (tokenisation version 1, `Pair.build`'s then)."""
    Pair = apps.get_model("campaigns", "Pair")
    batch = []
    for pair in Pair.objects.only("pk", "source", "hypothesis").iterator(chunk_size=1000):
        pair.tokens = {"source": word_tokens(pair.source, 1), "hypothesis": word_tokens(pair.hypothesis, 1)}
        batch.append(pair)
        if len(batch) == 1000:
            Pair.objects.bulk_update(batch, ["tokens"])
            batch = []
    Pair.objects.bulk_update(batch, ["tokens"])


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0010_campaign_system_keys"),
    ]

    operations = [
        migrations.AddField(
            model_name="pair",
            name="tokens",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="pair",
            name="gold_tags",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="campaign",
            name="span_highlight",
            field=models.BooleanField(
                default=False,
                help_text="Span tagging: highlight the words that differ (off by default: it would suggest the answer).",
            ),
        ),
        migrations.RunPython(store_tokens, migrations.RunPython.noop),
    ]
