from django.db import migrations, models


class Migration(migrations.Migration):
    """Pairs record the tokenisation their words were made by: those stored so far were made by version 1."""

    dependencies = [
        ("campaigns", "0016_pair_choice_wave"),
    ]

    operations = [
        migrations.AddField(
            model_name="pair",
            name="tokenisation",
            field=models.PositiveSmallIntegerField(default=1, editable=False),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="pair",
            name="tokenisation",
            field=models.PositiveSmallIntegerField(default=2, editable=False),
        ),
    ]
