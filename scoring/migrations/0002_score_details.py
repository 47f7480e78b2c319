from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="score",
            name="details",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
