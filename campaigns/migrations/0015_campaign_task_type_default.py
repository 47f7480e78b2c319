# The default task type is the registry's (annotation.tasktypes.registry.DEFAULT_TASK_TYPE), read when
# a campaign is created; no column changes (Django keeps field defaults in Python, not in the database).

from django.db import migrations, models

import campaigns.models


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0014_campaign_llm_backends"),
    ]

    operations = [
        migrations.AlterField(
            model_name="campaign",
            name="task_type",
            field=models.CharField(
                default=campaigns.models.default_task_type,
                help_text="What judges are asked about each pair (a task type's name).",
                max_length=40,
            ),
        ),
    ]
