from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0009_campaign_deleted_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="system_keys",
            field=models.CharField(
                blank=True,
                help_text="Metadata key(s), comma-separated, naming the system that produced each hypothesis "
                "(empty: the 'system' column of an imported file, else generator + template).",
                max_length=200,
            ),
        ),
    ]
