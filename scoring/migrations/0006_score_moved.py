# The Score model moved to campaigns (campaigns 0018): its state leaves this app, its table stays.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("scoring", "0005_score_failure_and_finite_value"),
        ("campaigns", "0018_score_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[], state_operations=[migrations.DeleteModel(name="Score")]
        ),
    ]
