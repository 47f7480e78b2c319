# A campaign's task type is one of the registered ones (the TASK_TYPES setting), read when asked through
# `campaigns.task_types.choices`, so registering a type needs no migration; no column changes.

from django.db import migrations, models

import campaigns.task_types


class Migration(migrations.Migration):
    dependencies = [
        ("campaigns", "0018_score_moved"),
    ]

    operations = [
        migrations.AlterField(
            model_name="campaign",
            name="task_type",
            field=models.CharField(
                choices=campaigns.task_types.choices,
                default=campaigns.task_types.default_task_type,
                help_text="What judges are asked about each pair (a task type's name).",
                max_length=40,
            ),
        ),
    ]
