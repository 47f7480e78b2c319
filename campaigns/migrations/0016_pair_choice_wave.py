from django.db import migrations, models


def waves_of_earlier_draws(apps, schema_editor):
    """A campaign drawn in one go before waves existed: its draw is its last wave (no wave is left to draw)."""
    Pair = apps.get_model("campaigns", "Pair")
    drawn = Pair.objects.filter(campaign__active_choice=True, chosen=True).values("campaign")
    Pair.objects.filter(campaign__in=drawn, chosen__isnull=False).update(choice_wave=3)


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0015_campaign_task_type_default"),
    ]

    operations = [
        migrations.AddField(
            model_name="pair",
            name="choice_wave",
            field=models.PositiveSmallIntegerField(blank=True, editable=False, null=True),
        ),
        migrations.AlterField(
            model_name="campaign",
            name="active_choice",
            field=models.BooleanField(
                default=False,
                help_text="Judges see pairs drawn with probabilities that grow with the predictor's uncertainty "
                "(drawn in waves from the campaign page); the estimates weight each judged pair by its probability. "
                "Off: every pair is judged, least-judged first.",
            ),
        ),
        migrations.RunPython(waves_of_earlier_draws, migrations.RunPython.noop),
    ]
