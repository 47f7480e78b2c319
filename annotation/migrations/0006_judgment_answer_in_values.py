"""Every answer in `Judgment.values`: the 5-way answer moves from the `label` column to `values["answer"]`.

The copy is one UPDATE per backend (a campaign may hold a million judgments); the way back copies each
5-way answer to `label` again and takes it out of `values`.
"""

from django.db import migrations

# The 5-way answers as this migration knows them (a migration keeps doing what it did: no import of the app).
ANSWERS = ("very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know")

FORWARD = {
    "sqlite": "UPDATE {table} SET {values} = json_set({values}, '$.answer', label) WHERE label <> ''",
    "postgresql": "UPDATE {table} SET {values} = jsonb_set({values}, '{{answer}}', to_jsonb(label)) WHERE label <> ''",
}
BACKWARD = {
    "sqlite": (
        "UPDATE {table} SET label = json_extract({values}, '$.answer'), {values} = json_remove({values}, '$.answer') "
        "WHERE json_extract({values}, '$.answer') IN ({answers})"
    ),
    "postgresql": (
        "UPDATE {table} SET label = {values} ->> 'answer', {values} = {values} - 'answer' "
        "WHERE {values} ->> 'answer' IN ({answers})"
    ),
}


def _run(statements, apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor not in statements:
        raise NotImplementedError(f"moving the 5-way answers is written for SQLite and PostgreSQL, not {vendor}")
    quote = schema_editor.quote_name
    table = apps.get_model("annotation", "Judgment")._meta.db_table
    answers = ", ".join(f"'{answer}'" for answer in ANSWERS)
    schema_editor.execute(statements[vendor].format(table=quote(table), values=quote("values"), answers=answers))


def drop_sqlite_triggers_reading_judgments(apps, schema_editor):
    """SQLite rebuilds the table to add a column back (or, before 3.35.5, to drop one), and a trigger of another
    table reading it (the data version's, `reports.data_version`) fails the rebuild: dropped here, and made again
    by `migrate`'s post-migrate step, as after every migration."""
    if schema_editor.connection.vendor != "sqlite":
        return
    table = apps.get_model("annotation", "Judgment")._meta.db_table
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND sql LIKE %s", [f"%{table}%"])
        names = [name for (name,) in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {schema_editor.quote_name(name)}")


def answers_into_values(apps, schema_editor):
    _run(FORWARD, apps, schema_editor)


def answers_back_into_label(apps, schema_editor):
    _run(BACKWARD, apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_active_choice"),
    ]

    operations = [
        migrations.RunPython(answers_into_values, answers_back_into_label),
        migrations.RunPython(drop_sqlite_triggers_reading_judgments, migrations.RunPython.noop),
        migrations.RemoveField(model_name="judgment", name="label"),
        migrations.RunPython(migrations.RunPython.noop, drop_sqlite_triggers_reading_judgments),
    ]
