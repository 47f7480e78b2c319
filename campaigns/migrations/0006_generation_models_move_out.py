# The generation models moved to the `generation` app (generation/migrations/0001_initial.py
# takes them over). Only Django's state forgets them here: their tables and rows stay.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0005_campaign_shared_with"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="GenerationOutput"),
                migrations.DeleteModel(name="GenerationSource"),
                migrations.DeleteModel(name="GenerationRun"),
                migrations.DeleteModel(name="PromptTemplate"),
            ],
            database_operations=[],
        ),
    ]
