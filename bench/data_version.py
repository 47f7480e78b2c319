"""What the data version costs on SQLite: import and scoring with and without it, side by side in one run.

The data version (`reports.models.DataVersion`) is advanced by triggers (`reports.data_version`), and SQLite
runs a trigger once per row: every score of a scoring batch is counted by its own trigger. This bench measures
two states of one database, in turn, each on a freshly imported campaign that is deleted after:

- `none`: no triggers (what the app cost before the data version);
- `as shipped`: the triggers.

Each figure is the process's CPU time (not wall time: the machine is shared, and the triggers' cost is CPU),
the least of `--runs` runs, for `import_pairs --create` and the `lev` and `bleu` scoring loops
(`scoring.service.score_campaign_inline`). The target: the data version costs under 10% of each (issue 36);
lev's loop, the cheapest metric, is accepted at +15-20% (issue 52: plain code over a seal that saved 0.35 s).
`bench/scale.py --only-triggers` gives the same at 400,000 pairs in wall time, through the commands.

    .venv/bin/python bench/data_version.py [--pairs 50000] [--runs 5]
"""

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TARGET = 0.10
# lev's loop (the cheapest metric: the trigger is a large share of a row) may cost up to a fifth (issue 52).
TARGETS = {"lev scoring loop": 0.20}
STATES = ("none", "as shipped")
WORKS = ("import_pairs --create", "lev scoring loop", "bleu scoring loop")


def set_up(directory, n_pairs):
    os.environ.update(
        PARASOL_IMPORT_MAX_ROWS=str(n_pairs + 1),  # the corpus is larger than an upload may be
        PARASOL_IMPORT_MAX_BYTES=str(2**31),
        DJANGO_SETTINGS_MODULE="parasol.settings",
        DJANGO_DEBUG="true",
        SQLITE_PATH=str(Path(directory) / "bench.sqlite3"),
        PARASOL_CACHE_DIR=str(Path(directory) / "cache"),
        PARASOL_METRICS="lev,bleu",
        PARASOL_SCORE_ON_CREATE="false",  # no broker: nothing queued on import
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def switch(state):
    """Put the database in `state`: the triggers dropped or made."""
    from django.db import connection

    from reports import data_version

    with connection.schema_editor() as editor:
        data_version.drop(editor) if state == "none" else data_version.remake(editor)


def cpu_seconds(work):
    start = time.process_time()
    work()
    return time.process_time() - start


def one_run(corpus, state, slug):
    """CPU seconds of the import and the two scoring loops of a new campaign in `state`; the campaign deleted after."""
    from django.core.management import call_command

    from campaigns.models import Campaign
    from scoring.service import score_campaign_inline

    switch(state)
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    imported = lambda: call_command("import_pairs", slug, corpus, "--create", **quiet)  # noqa: E731
    figures = {"import_pairs --create": cpu_seconds(imported)}
    campaign = Campaign.objects.get(slug=slug)
    for metric in ("lev", "bleu"):
        figures[f"{metric} scoring loop"] = cpu_seconds(lambda metric=metric: score_campaign_inline(campaign, metric))
    switch("none")  # the deletion is not measured: quicker without triggers
    campaign.delete()
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from bench.scale import write_corpus

    with tempfile.TemporaryDirectory(prefix="parasol-data-version-") as directory:
        set_up(directory, args.pairs)
        corpus = str(Path(directory) / "corpus.tsv")
        write_corpus(corpus, args.pairs)
        print(f"The data version's cost on SQLite: {args.pairs:,} pairs, least CPU time of {args.runs} runs a state")
        best = {state: dict.fromkeys(WORKS, float("inf")) for state in STATES}
        for run in range(args.runs):
            for offset in range(len(STATES)):  # each run starts with another state: none is favoured by order
                state = STATES[(run + offset) % len(STATES)]
                figures = one_run(corpus, state, f"run{run}-{offset}")
                best[state] = {work: min(best[state][work], figures[work]) for work in WORKS}
        for work in WORKS:
            print(line(work, best))


def line(work, best):
    """One work's least CPU times by state, each state's cost over `none`, and the shipped state's verdict."""
    none = best["none"][work]
    cells = [f"{state} {best[state][work]:6.2f} s ({best[state][work] / none - 1:+6.1%})" for state in STATES[1:]]
    target = TARGETS.get(work, TARGET)
    verdict = "met" if best["as shipped"][work] / none - 1 < target else "NOT met"
    return f"{work:22} none {none:6.2f} s; {'; '.join(cells)}  (target < {target:.0%}: {verdict})"


if __name__ == "__main__":
    main()
