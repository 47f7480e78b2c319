"""Time reading a campaign's counted judgments with their votes, what a report reads of them (SQLite).

    .venv/bin/python bench/judgments.py [--pairs 100000] [--against CHECKOUT]

Not a test. Three judges answer every pair of a fresh SQLite database (5-way answers, no scores: the
report's other readers are timed by `bench/report.py --db`), then `reports.frames.judgments_with_votes`
runs three times. With --against, an older checkout of Parasol (one that stored the 5-way answer in
`Judgment.label` is understood too) is timed the same way in its own process first: a before/after.
"""

import argparse
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ANSWERS = ["very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know"]
RUNS = 3


def measure(n_pairs):
    """Build the database in this process's checkout and print the timings of the reads."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp()) / "bench.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from annotation.models import Assignment, Judge, Judgment
    from campaigns.models import Campaign, Pair
    from reports.frames import judgments_with_votes

    # An older checkout kept the 5-way answer in its own column.
    in_label = any(field.name == "label" for field in Judgment._meta.get_fields())
    campaign = Campaign.objects.create(slug="bench", name="Bench")
    pairs = Pair.objects.bulk_create(
        (Pair(campaign=campaign, external_id=f"p{i}", source="A b c.", hypothesis="A b d.") for i in range(n_pairs)),
        batch_size=5000,
    )
    now = timezone.now()
    for j in range(3):
        judge = Judge.objects.create(campaign=campaign, consented_at=now, english_level="good")
        Assignment.objects.bulk_create(
            (Assignment(judge=judge, pair=pair, position=i + 1, top="source") for i, pair in enumerate(pairs)),
            batch_size=5000,
        )
        answers = ((a, ANSWERS[(a.pair_id * 7 + j) % 5]) for a in Assignment.objects.filter(judge=judge))
        Judgment.objects.bulk_create(
            (
                Judgment(
                    assignment=a,
                    judge=judge,
                    pair_id=a.pair_id,
                    **({"label": x} if in_label else {"values": {"answer": x}}),
                )
                for a, x in answers
            ),
            batch_size=5000,
        )
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        frame = judgments_with_votes([campaign])
        times.append(time.perf_counter() - start)
    print(
        f"{len(frame):,} judgments ({int(frame['vote'].sum()):,} paraphrase votes): judgments_with_votes "
        f"{', '.join(f'{t:.2f}' for t in times)} s, best {min(times):.2f} s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--against", help="an older checkout, timed the same way first")
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)  # the child process's own run
    args = parser.parse_args()
    if args.here:
        sys.path.insert(0, os.getcwd())
        measure(args.pairs)
        return
    for name, root in ([("against", Path(args.against).resolve())] if args.against else []) + [("this", REPO)]:
        command = [sys.executable, str(Path(__file__).resolve()), "--here", "--pairs", str(args.pairs)]
        result = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
        line = result.stdout.strip().splitlines()[-1:] or [result.stderr.strip()[-500:]]
        print(f"{name}: {line[0]}")


if __name__ == "__main__":
    main()
