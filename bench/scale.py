"""A QQP-sized corpus from import to report: each figure printed beside its target.

    .venv/bin/python bench/scale.py [--pairs 20000] [--worker-pairs 20000] [--skip-workers]
                                      [--skip-triggers | --only-triggers] [--reuse FOLDER]

Not a test. Runs the real commands in child processes on a fresh SQLite database:
- import: `import_pairs --create` of a synthetic gold-labelled TSV (8-30 words per
  sentence): rows/s and peak RSS, beside a plain `pandas.read_csv` + `bulk_create`;
- scoring: `score --inline` with `lev` then `bleu`: pairs/s end to end, beside the same
  metric alone on the same sentences in the same batches, and the share of time outside it;
- the data version: the same import and the `lev` and `bleu` scoring loops into more campaigns, one with
  the triggers of `reports.models.DataVersion` dropped, one with them (skip: --skip-triggers);
- workers: `score --wait` through 1 then 2 real Celery worker processes (Redis broker,
  a throwaway PostgreSQL server: SQLite serialises concurrent writers) on fresh copies
  of the corpus (bleu); then a run where a worker joins and another leaves mid-way,
  whose scores must equal the 1-worker run's, one per pair;
- report: `report --label-source gold` with lev, bleu and 7 more metrics whose scores
  are synthetic (noisy functions of the gold label: nobody scores 400k pairs with an
  LLM on 2 CPU cores), cold (the command uses no cache), three runs in a row; its peak RSS is
  the largest process's (the command's: the workers it forks share its pages);
- live page: the report as the page gets it (`reports.cache.get_report`, the worker's work, then
  the page and its figures through Django's test client), each in a fresh process (a restarted
  worker: nothing in memory; its modules and URLs loaded, and the libraries a report worker imports
  as it starts, before the clock starts): cold on an empty cache, then after 100 new judgments (3,000 judgments on 1,000
  pairs before), against the gold labels and against the judges';
- export: `export_pairs` of those pairs with their 9 metric columns: time and peak RSS.

With --reuse FOLDER (the folder an earlier run printed), a copy of that run's database is reported on: no import,
no scoring, no worker runs; its synthetic scores and first judgments are kept (the report, the live page and the
export only). With --against CHECKOUT (an older checkout of Parasol), the report, the live page and the export are
run by both checkouts alternately on the same database, each with its own cache: a before/after in one run.
"""

import argparse
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TARGETS = {
    "import_rss_mib": 500,
    "outside_metric_share": 0.20,
    "report_seconds": 15.0,
    "report_rss_mib": 1024,
    "live_page_seconds": 3.0,
}
WORDS = (
    "the a cat dog sat on mat quickly slowly house river tree small big old new red blue runs walks city "
    "people said that would could market price rose fell report company year government told police"
).split()
SYNTHETIC_METRICS = {
    "meteor": "higher",
    "bertscore": "higher",
    "parascore": "higher",
    "sbert": "higher",
    "parapluie_direct": "higher",
    "parapluie_indirect": "higher",
    "parapluie_fs_direct": "higher",
}


def write_corpus(path, n_pairs, seed=0):
    """A gold-labelled TSV written row by row: paraphrases keep most words, non-paraphrases fewer."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as out:
        out.write("id\tsource\thypothesis\tlabel\tcorpus\n")
        for i in range(n_pairs):
            length = int(rng.integers(8, 31))
            source = rng.choice(WORDS, size=length)
            label = int(rng.random() < 0.4)
            keep = rng.random(length) < (0.85 if label else 0.55)
            hypothesis = np.where(keep, source, rng.choice(WORDS, size=length))
            corpus = "QQP" if i % 4 else "PAWS"
            out.write(f"q{i}\t{' '.join(source)}\t{' '.join(hypothesis)}\t{label}\t{corpus}\n")


def verdict(met):
    return "met" if met else "NOT met"


def run(command, env, label, output=None, root=REPO):
    """Run a child process in checkout `root`; (seconds, peak RSS in MiB of that process).
    Its stdout is appended to `output`."""
    start = time.perf_counter()
    env = dict(env, PYTHONPATH=str(root))
    process = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    text = process.stdout.read().decode()
    process.stdout.close()
    if status != 0:
        raise SystemExit(f"{label} failed ({status}): {text}")
    if output is not None:
        output.append(text)
    return seconds, usage.ru_maxrss / 1024


def manage(*args, root=REPO):
    return [sys.executable, str(Path(root) / "manage.py"), *args]


def checkouts(against):
    """(name, root) of this checkout and, with --against, of the older one run beside it on the same database."""
    return [("this", REPO)] + ([("against", Path(against).resolve())] if against else [])


BASELINE = """
import sys, django, pandas as pd
django.setup()
from campaigns.models import Campaign, Pair
campaign = Campaign.objects.create(slug=sys.argv[2], name=sys.argv[2])
frame = pd.read_csv(sys.argv[1], sep="\\t", quoting=3, dtype=str, keep_default_na=False)
Pair.objects.bulk_create(
    (Pair(campaign=campaign, external_id=r.id, corpus=r.corpus, source=r.source, hypothesis=r.hypothesis,
          gold_label=int(r.label)) for r in frame.itertuples()),
    batch_size=2000,
)
"""


def bench_import(corpus, env, n_pairs):
    seconds, rss = run(manage("import_pairs", "bench", str(corpus), "--create"), env, "import_pairs")
    # The same import with DJANGO_DEBUG=true (workstation and demo): Django's query log must not grow with it.
    debug_env = dict(env, DJANGO_DEBUG="true")
    debug_seconds, debug_rss = run(manage("import_pairs", "bench-debug", str(corpus), "--create"), debug_env, "debug")
    base_seconds, base_rss = run([sys.executable, "-c", BASELINE, str(corpus), "baseline"], env, "baseline")
    print(f"\n## import of {n_pairs:,} rows ({corpus.stat().st_size / 2**20:.0f} MiB TSV)")
    target = TARGETS["import_rss_mib"]
    for name, took, peak in (("", seconds, rss), (" (DEBUG)", debug_seconds, debug_rss)):
        print(
            f"import_pairs --create{name:8}{took:7.1f} s  {n_pairs / took:9,.0f} rows/s  peak RSS {peak:6.0f} MiB"
            f"  (target < {target} MiB: {verdict(peak < target)})"
        )
    print(
        f"pandas + bulk_create    {base_seconds:7.1f} s  {n_pairs / base_seconds:9,.0f} rows/s  "
        f"peak RSS {base_rss:6.0f} MiB  (baseline: no validation, not atomic, whole file in memory)"
    )


def metric_only_seconds(corpus, metric, batch):
    """The metric alone on the corpus's sentences, in the batches the service uses."""
    import csv

    from metrics.registry import get_metric

    with open(corpus, encoding="utf-8") as handle:
        rows = [(row["source"], row["hypothesis"]) for row in csv.DictReader(handle, delimiter="\t", quoting=3)]
    scorer = get_metric(metric)
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        part = rows[i : i + batch]
        scorer.score(sources=[r[0] for r in part], hypotheses=[r[1] for r in part])
    return time.perf_counter() - start


def bench_scoring(corpus, env, n_pairs):
    print(f"\n## score --inline, {n_pairs:,} pairs")
    batch = int(env.get("PARASOL_CPU_SCORING_BATCH_SIZE", 1000))
    target = TARGETS["outside_metric_share"]
    for metric in ("lev", "bleu"):
        output = []
        seconds, _rss = run(manage("score", "bench", "--metrics", metric, "--inline"), env, f"score {metric}", output)
        # The command times its own scoring loop (reading pairs, the metric, storing scores), start-up aside.
        loop = float(re.search(r"stored in ([0-9.]+) s", output[0]).group(1))
        alone = metric_only_seconds(corpus, metric, batch)
        outside_loop, outside_process = 1 - alone / loop, 1 - alone / seconds
        # The target is bleu's (issue 29): lev takes under 3 µs a pair, so storing a score outweighs it whatever.
        judged = f"target < {target:.0%}: {verdict(outside_loop < target)}" if metric == "bleu" else "no target"
        print(
            f"{metric:5} metric alone {alone:6.1f} s = {n_pairs / alone:11,.0f} pairs/s; scoring loop {loop:6.1f} s = "
            f"{n_pairs / loop:9,.0f} pairs/s, {outside_loop:5.1%} outside the metric (database, serialisation; "
            f"{judged}); whole command with Django start-up "
            f"{seconds:6.1f} s = {n_pairs / seconds:9,.0f} pairs/s, {outside_process:5.1%} outside the metric"
        )


def bench_workers(corpus, env, n_pairs):
    from tests import servers
    from tests.pgserver import postgres_server

    print(f"\n## workers: score --wait of {n_pairs:,} pairs with bleu through real Celery workers (PostgreSQL, Redis)")
    with servers.redis_server() as url, postgres_server() as database_url:
        env = dict(env, REDIS_URL=url, CELERY_BROKER_URL=url, CELERY_RESULT_BACKEND=url, PARASOL_METRICS="lev,bleu")
        env["DATABASE_URL"] = database_url
        run(manage("migrate", "--noinput"), env, "migrate")
        throughput = {}
        for count in (1, 2):
            slug = f"workers{count}"
            run(manage("import_pairs", slug, str(corpus), "--create"), env, "import")
            workers = [start_worker(env, f"w{count}-{i}") for i in range(count)]
            try:
                wait_for_workers(env, count)
                seconds, _ = run(manage("score", slug, "--metrics", "bleu", "--wait"), env, "score --wait")
            finally:
                for worker in workers:
                    servers.stop(worker)
            throughput[count] = n_pairs / seconds
            print(f"{count} worker(s): {seconds:6.1f} s = {throughput[count]:8,.0f} pairs/s")
        print(f"scaling 1 -> 2 workers: {throughput[2] / throughput[1]:.2f}x on this 2-core machine (shared)")
        join_and_leave(corpus, env, n_pairs)


def start_worker(env, name):
    command = [sys.executable, "-m", "celery", "-A", "parasol", "worker", "-Q", "cpu", "-P", "solo", "-l", "error"]
    return subprocess.Popen(
        [*command, "-n", f"{name}@%h"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def wait_for_workers(env, count, timeout=120):
    from parasol.celery import app

    app.conf.broker_url = env["CELERY_BROKER_URL"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=1.0)) >= count:
            return
    raise SystemExit(f"{count} worker(s) did not answer in {timeout} s")


def join_and_leave(corpus, env, n_pairs):
    """One worker starts, a second joins at ~30%, the first leaves at ~60%: the scores must not change."""
    import psycopg

    from tests import servers

    run(manage("import_pairs", "churn", str(corpus), "--create"), env, "import")
    database = psycopg.connect(env["DATABASE_URL"], autocommit=True)

    def scored(slug):
        query = (
            "select count(*) from scoring_score s join campaigns_pair p on p.id = s.pair_id "
            "join campaigns_campaign c on c.id = p.campaign_id where c.slug = %s and s.metric = 'bleu'"
        )
        return database.execute(query, (slug,)).fetchone()[0]

    first = start_worker(env, "first")
    wait_for_workers(env, 1)
    queued = subprocess.Popen(manage("score", "churn", "--metrics", "bleu", "--wait"), cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    second = None
    try:
        while scored("churn") < 0.3 * n_pairs:
            time.sleep(0.2)
        second = start_worker(env, "second")
        while scored("churn") < 0.6 * n_pairs:
            time.sleep(0.2)
        at_leave = scored("churn")
        servers.stop(first)
        if queued.wait(timeout=3600) != 0:
            raise SystemExit("score --wait failed during the join/leave run")
    finally:
        servers.stop(first)
        if second is not None:
            servers.stop(second)
    differing = database.execute(
        """select count(*) from scoring_score a join campaigns_pair pa on pa.id = a.pair_id
           join campaigns_campaign ca on ca.id = pa.campaign_id and ca.slug = 'churn'
           join campaigns_pair pb on pb.external_id = pa.external_id
           join campaigns_campaign cb on cb.id = pb.campaign_id and cb.slug = 'workers1'
           join scoring_score b on b.pair_id = pb.id and b.metric = a.metric
           where a.metric = 'bleu' and a.value != b.value"""
    ).fetchone()[0]
    doubled = database.execute(
        """select count(*) from (select pair_id from scoring_score where metric = 'bleu'
           group by pair_id, signature having count(*) > 1) as doubled"""
    ).fetchone()[0]
    total = scored("churn")
    print(
        f"join at 30% / leave at {at_leave / n_pairs:.0%}: {total:,} of {n_pairs:,} pairs scored once "
        f"({doubled} doubled), {differing} scores differ from the 1-worker run"
    )


def copy_database(source, target) -> int:
    """A consistent copy of an earlier run's database (SQLite's backup, its WAL included); its bench pairs."""
    import sqlite3

    with sqlite3.connect(source) as old, sqlite3.connect(target) as new:
        old.backup(new)
        return new.execute(
            "select count(*) from campaigns_pair p join campaigns_campaign c on c.id = p.campaign_id "
            "where c.slug = 'bench' and not p.is_training and not p.is_control"
        ).fetchone()[0]


def add_synthetic_scores(env, seed=1):
    """Scores of 7 more metrics, noisy functions of the gold label, stored as a worker would."""
    import sqlite3

    rng = np.random.default_rng(seed)
    database = sqlite3.connect(env["SQLITE_PATH"], timeout=60)
    rows = database.execute(
        "select p.id, p.gold_label from campaigns_pair p join campaigns_campaign c on c.id = p.campaign_id "
        "where c.slug = 'bench' and not p.is_training and not p.is_control order by p.id"
    ).fetchall()  # in pk order: without ORDER BY, the order (so which pair gets which noise) follows the index used
    ids = np.array([r[0] for r in rows])
    gold = np.array([r[1] for r in rows], dtype=float)
    for i, metric in enumerate(SYNTHETIC_METRICS):
        values = gold * (0.2 + 0.05 * i) + rng.normal(0, 0.3, len(ids))
        database.executemany(
            "insert into scoring_score (pair_id, metric, signature, value, created_at) "
            "values (?, ?, ?, ?, datetime('now'))",
            ((int(pk), metric, f"metric:{metric}|synthetic", float(v)) for pk, v in zip(ids, values)),
        )
    database.commit()


REPORT_RUNS = 3  # the command is run this many times in a row: one run on a shared machine says little


def bench_report(env, n_pairs, before=None, against=None, reused=False):
    if not reused:
        add_synthetic_scores(env)
    folder = Path(env["SQLITE_PATH"]).parent
    print(f"\n## report of {n_pairs:,} pairs x 9 metrics (gold labels; 7 metrics' scores synthetic)")
    for attempt in range(1, REPORT_RUNS + 1):
        for name, root in checkouts(against):  # side by side: each run of this checkout beside one of the other
            command = manage(
                "report", "bench", "--label-source", "gold", "--out", str(folder / f"report-{name}"), root=root
            )
            seconds, rss = run(command, env, "report", root=root)
            _print_report_run(name if against else "", attempt, seconds, rss)
    out = folder / "report-this"
    print(f"curves_rank.csv {(out / 'curves_rank.csv').stat().st_size / 2**20:.2f} MiB")
    for other in (before, against and folder / "report-against"):
        if other:
            names = sorted(path.name for path in Path(other).glob("*.csv"))
            differ = [n for n in names if (Path(other) / n).read_bytes() != (out / n).read_bytes()]
            print(
                f"tables against {other}: {len(names) - len(differ)} of {len(names)} CSVs byte-identical {differ or ''}"
            )


def _print_report_run(name, attempt, seconds, rss):
    print(
        f"{name + ': ' if name else ''}report --label-source gold (tables and figures, cold), "
        f"run {attempt} of {REPORT_RUNS}: {seconds:6.1f} s "
        f"(target < {TARGETS['report_seconds']:.0f} s: {verdict(seconds < TARGETS['report_seconds'])}), "
        f"peak RSS {rss:.0f} MiB (target < {TARGETS['report_rss_mib']} MiB: "
        f"{verdict(rss < TARGETS['report_rss_mib'])})"
    )


JUDGE = """
import sys, django
django.setup()
from django.utils import timezone
from annotation.models import Assignment, Judge, Judgment
from annotation.tasktypes.similarity.scale import ANSWER_KEY, ANSWERS
from campaigns.models import Campaign
campaign = Campaign.objects.get(slug="bench")
judges, pairs, offset = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
chosen = list(campaign.real_pairs.order_by("pk")[offset : offset + pairs])
now = timezone.now()
for j in range(judges):
    judge = Judge.objects.create(campaign=campaign, consented_at=now, english_level="good", guidelines_read_at=now)
    assignments = Assignment.objects.bulk_create(
        Assignment(judge=judge, pair=pair, position=i + 1, top="source") for i, pair in enumerate(chosen)
    )
    Judgment.objects.bulk_create(
        Judgment(assignment=a, judge=judge, pair=a.pair, values={ANSWER_KEY: ANSWERS[(a.pair_id * 7 + j) % 5]})
        for a in assignments
    )
"""

LIVE = """
import sys, time, django
django.setup()
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from campaigns.models import Campaign
from reports.cache import figure_bytes, get_report
from reports.figures import figure_specs
from django.urls import get_resolver
get_resolver().url_patterns  # a running server's process: its URLs loaded (at its first request), no report state
try:
    from reports.analysis import load_libraries
except ImportError:  # an older checkout (--against), whose workers imported nothing as they started
    load_libraries = lambda: None
load_libraries()  # what a report worker imports as it starts (reports/apps.py)
campaign = Campaign.objects.get(slug="bench")
start = time.perf_counter()
cached = get_report([campaign], sys.argv[1])
computed = time.perf_counter()
user, _ = get_user_model().objects.get_or_create(username="bench", defaults={"is_staff": True, "is_superuser": True})
client = Client()
client.force_login(user)
response = client.get(reverse("reports-show-report", args=["bench"]) + "?label=" + sys.argv[1], secure=True)
assert response.status_code == 200, response.status_code
paged = time.perf_counter()
for spec in figure_specs(cached.report):
    figure_bytes(cached, spec, "png")
drawn = time.perf_counter()
print(f"{computed - start:.2f} {paged - computed:.2f} {drawn - paged:.2f}")
"""


def bench_live(env, n_pairs, against=None, rounds=1, reused=False):
    """The live page: cold on an empty cache, then warm after 100 new judgments (`rounds` times), each in a
    new process; with `against`, the older checkout's page beside this one's on the same data, each with its cache."""
    if not reused:
        run([sys.executable, "-c", JUDGE, "3", "1000", "0"], env, "judges")
    print(f"\n## live report page of {n_pairs:,} pairs x 9 metrics (3,000 judgments on 1,000 pairs, then 100 more)")
    target = TARGETS["live_page_seconds"]
    for label_source in ("gold", "human"):
        for state in ["cold"] + ["after 100 new judgments"] * rounds:
            if state != "cold":
                run([sys.executable, "-c", JUDGE, "1", "100", "950"], env, "new judgments")
            for name, root in checkouts(against):
                cache = Path(env["PARASOL_CACHE_DIR"]) / f"live-{label_source}-{name}"
                output = []
                _seconds, rss = run(
                    [sys.executable, "-c", LIVE, label_source],
                    dict(env, PARASOL_CACHE_DIR=str(cache)),
                    "live",
                    output,
                    root,
                )
                compute, page, figures = (float(x) for x in output[0].split())
                print(
                    f"{name + ': ' if against else ''}{label_source:5} labels, {state:24}: report {compute:6.2f} s + "
                    f"page {page:5.2f} s = {compute + page:6.2f} s; figures {figures:5.2f} s; peak RSS {rss:5.0f} MiB"
                    + (f"  (target < {target:.0f} s: {verdict(compute + page < target)})" if state != "cold" else "")
                )


def bench_export(env, n_pairs, against=None):
    """The pairs CSV with 9 metric columns, written page by page: time and peak RSS of the command."""
    print(f"\n## export of {n_pairs:,} pairs x 9 metrics")
    for name, root in checkouts(against):
        out = Path(env["SQLITE_PATH"]).parent / f"pairs-{name}.csv"
        seconds, rss = run(
            manage("export_pairs", "bench", "--out", str(out), root=root), env, "export_pairs", root=root
        )
        print(
            f"{name + ': ' if against else ''}export_pairs (streamed, pages of 5,000 rows) {seconds:6.1f} s = "
            f"{n_pairs / seconds:8,.0f} rows/s, peak RSS {rss:.0f} MiB; {out.stat().st_size / 2**20:.0f} MiB of CSV"
        )


TRIGGERS_SWITCH = """
import sys, django
django.setup()
from django.db import connection
from reports import data_version
with connection.schema_editor() as editor:
    (data_version.remake if sys.argv[1] == "on" else data_version.drop)(editor)
"""


def bench_data_version(corpus, env, n_pairs):
    """import_pairs and the lev and bleu scoring loops with the data version's triggers and without them."""
    print(f"\n## the data version's triggers: import and scoring of {n_pairs:,} pairs with and without them")
    for attempt in range(1, TRIGGER_RUNS + 1):
        figures = {}
        for state in ("off", "on"):  # off first: the database is then the smaller one, which favours no triggers
            run([sys.executable, "-c", TRIGGERS_SWITCH, state], env, f"triggers {state}")
            slug = f"triggers-{state}-{attempt}"
            imported, _rss = run(manage("import_pairs", slug, str(corpus), "--create"), env, f"import {state}")
            figures[state] = {"import_pairs --create": imported}
            for metric in ("lev", "bleu"):
                output = []
                run(manage("score", slug, "--metrics", metric, "--inline"), env, f"score {state}", output)
                loop = float(re.search(r"stored in ([0-9.]+) s", output[0]).group(1))
                figures[state][f"{metric} scoring loop"] = loop
        for what in figures["off"]:
            off, on = figures["off"][what], figures["on"][what]
            print(f"run {attempt}: {what:22} without triggers {off:7.1f} s, with {on:7.1f} s: {on / off - 1:+6.1%}")


TRIGGER_RUNS = 2  # off then on, twice: one pair of runs on a shared machine says little


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--worker-pairs", type=int, default=20_000, help="corpus size of the worker runs")
    parser.add_argument("--skip-workers", action="store_true")
    parser.add_argument("--skip-triggers", action="store_true", help="skip the runs with and without the triggers")
    parser.add_argument("--only-triggers", action="store_true", help="only the runs with and without the triggers")
    parser.add_argument("--report-before", help="a report folder of the same run on older code: diff its CSVs")
    parser.add_argument(
        "--against", help="an older checkout: its report, live page and export run beside this one's, on the same data"
    )
    parser.add_argument("--live-rounds", type=int, default=1, help="rounds of 100 new judgments and a warm live page")
    parser.add_argument("--reuse", help="an earlier run's folder: report on a copy of its database, nothing imported")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="parasol-scale-"))
    if args.reuse:
        args.pairs = copy_database(Path(args.reuse) / "scale.sqlite3", folder / "scale.sqlite3")
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="parasol.settings",
        SQLITE_PATH=str(folder / "scale.sqlite3"),
        PARASOL_CACHE_DIR=str(folder / "cache"),
        PARASOL_IMPORT_MAX_ROWS=str(max(args.pairs, args.worker_pairs) + 1),
        PARASOL_IMPORT_MAX_BYTES=str(2**31),
        PARASOL_SCORE_ON_CREATE="false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        PYTHONPATH=str(REPO),
    )
    os.environ.update(env)
    import django

    django.setup()
    run(manage("migrate", "--noinput"), env, "migrate")
    print(f"Parasol at scale: {args.pairs:,} pairs, SQLite in {folder}, {os.cpu_count()} CPU(s)")
    if args.reuse:
        print(f"(a copy of the database of {args.reuse}: its import, scores and first judgments)")
        bench_report(env, args.pairs, args.report_before, args.against, reused=True)
        bench_live(env, args.pairs, args.against, args.live_rounds, reused=True)
        bench_export(env, args.pairs, args.against)
        return
    corpus = folder / "corpus.tsv"
    write_corpus(corpus, args.pairs)
    if args.only_triggers:
        bench_data_version(corpus, env, args.pairs)
        return
    bench_import(corpus, env, args.pairs)
    bench_scoring(corpus, env, args.pairs)
    if not args.skip_triggers:
        bench_data_version(corpus, env, args.pairs)
    if not args.skip_workers:
        small = corpus if args.worker_pairs >= args.pairs else folder / "workers.tsv"
        if small != corpus:
            write_corpus(small, args.worker_pairs)
        bench_workers(small, env, min(args.worker_pairs, args.pairs))
    bench_report(env, args.pairs, args.report_before, args.against)
    bench_live(env, args.pairs, args.against, args.live_rounds)
    bench_export(env, args.pairs, args.against)


if __name__ == "__main__":
    main()
