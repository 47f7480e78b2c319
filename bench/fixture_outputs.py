"""Every export and report table of one fixture campaign per task type, written to a folder.

    .venv/bin/python bench/fixture_outputs.py OUT

Not a test: a refactoring's witness. Run it before and after a change that must not change
behaviour, then `diff -r BEFORE AFTER` (issue 31 and the performance work of issue 29 did).
On a fresh SQLite database it imports the 60 demo pairs (with gold labels) into one campaign
per task type, lets five seeded judges answer every pair (Don't know and ties included),
scores the pairs with lev and bleu and two synthetic metrics whose values tie, then writes:
the pairs CSV (`export_pairs`), the judgments CSV, the taggings JSONL, and the tables of
`report --latex --no-figures` against the judges' and the gold labels. Times are fixed, so
two runs on the same code give the same bytes.
"""

import io
import os
import random
import secrets
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SIMILARITY_ANSWERS = ("same_meaning", "mostly_same", "somewhat_different", "very_different", "dont_know")
CRITERIA = ("adequacy", "fluency", "dissimilarity", "overall")
JUDGES = 5
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def _tagging(rng, pair):
    return {
        side: sorted(rng.sample(range(len(pair.words(side))), k=rng.randint(0, 2))) for side in ("source", "hypothesis")
    }


# A seeded answer of each task type, as its judge page would send it.
ANSWER_OF_TASK = {
    "similarity": lambda rng, pair: {"answer": rng.choice(SIMILARITY_ANSWERS)},
    "criteria": lambda rng, pair: {criterion: rng.randint(1, 5) for criterion in CRITERIA},
    "spans": _tagging,
    "similarity+spans": lambda rng, pair: {"answer": rng.choice(SIMILARITY_ANSWERS[:4]), **_tagging(rng, pair)},
}


def build(task_type, rng):
    from django.core.management import call_command

    from annotation import assignment as assign
    from annotation.controls import protocol_of
    from annotation.models import Judge
    from campaigns.models import Campaign

    slug = task_type.replace("+", "-")
    call_command("import_pairs", slug, str(REPO / "fixtures" / "demo_pairs.jsonl"), "--create", stdout=io.StringIO())
    campaign = Campaign.objects.get(slug=slug)
    campaign.task_type = task_type
    campaign.save()
    protocol = protocol_of(campaign)
    protocol.control_share = 0
    protocol.save()
    campaign.ensure_training_pairs()
    pairs = list(campaign.real_pairs.order_by("pk"))
    for j in range(JUDGES):
        judge = Judge.objects.create(
            campaign=campaign,
            consented_at=EPOCH,
            english_level=("good", "native", "fair")[j % 3],
            guidelines_read_at=EPOCH,
        )
        for position, pair in enumerate(pairs, start=1):
            assignment = judge.assignments.create(
                pair=pair, position=position, top=("source", "hypothesis")[position % 2]
            )
            assign.record_judgment(assignment, ANSWER_OF_TASK[task_type](rng, pair))
    return campaign


def fix_times():
    from annotation.models import Assignment, Judgment

    for model, field in ((Judgment, "created_at"), (Assignment, "shown_at")):
        for pk in model.objects.values_list("pk", flat=True):
            model.objects.filter(pk=pk).update(**{field: EPOCH + timedelta(seconds=pk)})
    Judgment.objects.update(response_ms=4200)


def add_scores(campaigns, rng):
    from django.core.management import call_command

    from campaigns.models import Score

    for campaign in campaigns:
        call_command("score", campaign.slug, "--metrics", "lev", "bleu", "--inline", stdout=io.StringIO())
        for pair in campaign.real_pairs.order_by("pk"):
            gold = pair.gold_label or 0
            for metric in ("sbert", "meteor"):  # rounded: many ties
                value = round(0.5 * gold + rng.random() * 0.6, 1)
                Score.objects.create(pair=pair, metric=metric, signature=f"metric:{metric}|fixture", value=value)
    Score.objects.update(created_at=EPOCH)


def write_outputs(campaign, out):
    from django.core.management import call_command

    from campaigns.exports import write_csv
    from reports import exports

    folder = out / campaign.slug
    folder.mkdir(parents=True)
    call_command("export_pairs", campaign.slug, "--out", str(folder / "pairs.csv"), stdout=io.StringIO())
    write_csv(exports.judgments_frame(campaign), folder / "judgments.csv")
    (folder / "taggings.jsonl").write_text("".join(f"{line}\n" for line in exports.tagging_lines(campaign)))
    for source in ("human", "gold"):
        target = folder / f"report-{source}"
        call_command(
            "report", campaign.slug, "--label-source", source, "--out", str(target), "--latex", "--no-figures",
            stdout=io.StringIO(), stderr=io.StringIO(),
        )  # fmt: skip


def main():
    out = Path(sys.argv[1])
    if out.exists():
        raise SystemExit(f"{out} exists: give a new folder")
    folder = Path(tempfile.mkdtemp(prefix="parasol-fixture-"))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="parasol.settings",
        SQLITE_PATH=str(folder / "fixture.sqlite3"),
        PARASOL_CACHE_DIR=str(folder / "cache"),
        PARASOL_SCORE_ON_CREATE="false",
        CELERY_TASK_ALWAYS_EAGER="true",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", "--noinput", verbosity=0)
    rng = random.Random(31)
    campaigns = [build(task_type, rng) for task_type in ANSWER_OF_TASK]
    fix_times()
    add_scores(campaigns, rng)
    for campaign in campaigns:
        write_outputs(campaign, out)
    print(f"wrote {sum(1 for _ in out.rglob('*') if _.is_file())} files to {out}")


if __name__ == "__main__":
    main()
