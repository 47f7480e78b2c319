"""Load test of the judge protocol against the real stack, with its invariants.

    .venv/bin/python bench/load_judges.py [--judges 100] [--think-ms 8000] [--arrival-s 30] [--sqlite]
    .venv/bin/python bench/load_judges.py --sqlite --judges 30 --web-workers 3   # the embedded default

Starts a throwaway PostgreSQL (or SQLite with --sqlite), Redis, gunicorn
(4 sync workers, or --web-workers) and a Celery worker scoring with lev and bleu, all on
127.0.0.1; creates a campaign (300 pairs, overlap 3, 20 pairs per judge) and
runs concurrent simulated judges, each a thread with its own cookie jar, from
consent to the thank-you page. Some double-click (the same answer posted twice
at once), go back (post an old assignment again), reload the item page, or
resume through the token link in a fresh cookie jar.

It prints requests/s and latency percentiles for "show pair" (GET of the item
page) and "answer" (POST of an answer), then checks, in the database:

- one judgment per (judge, assignment), by the judge and pair assigned;
- no acknowledged answer is lost, and a repeated answer changed nothing;
- no pair has more assignments than the overlap target, and every real-pair
  assignment took a least-loaded pair the judge had not seen (replayed in
  creation order), so no pair was over-filled while others waited;
- reloads, resumes and double clicks showed the pair the judge was on;
- no response was a server error.

Exits 1 when an invariant fails. tests/system/test_load_invariants.py runs the same
harness at a small scale. Every loop is bounded in steps and in time.
"""

import argparse
import csv
import http.client
import io
import os
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests import servers  # noqa: E402 (needs the repository on the path)

ANSWERS = ["very_different", "slightly_similar", "mostly_similar", "same_meaning", "dont_know"]
ASSIGNMENT_RE = re.compile(r'data-assignment="(\d+)"')
CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
# Tests raise this (a loaded machine can take long to answer); the bench keeps it tight.
REQUEST_TIMEOUT = 30
TARGET_P95_MS = 150


# HTTP ----------------------------------------------------------------------------------------


@dataclass
class Stats:
    """Latencies (ms) per request kind, status counts, and the server errors seen."""

    latencies: dict = field(default_factory=lambda: defaultdict(list))
    statuses: Counter = field(default_factory=Counter)
    errors: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind, milliseconds, status):
        with self.lock:
            self.latencies[kind].append(milliseconds)
            self.statuses[status] += 1

    def error(self, message):
        with self.lock:
            self.errors.append(message)

    @property
    def requests(self):
        return sum(self.statuses.values())


class Browser:
    """One cookie jar talking to 127.0.0.1:port; a new connection per request (gunicorn sync closes them)."""

    def __init__(self, port, stats):
        self.port, self.stats, self.cookies = port, stats, {}

    def request(self, method, path, *, kind, form=None, headers=None):
        headers = dict(headers or {})
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        started = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=REQUEST_TIMEOUT)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
        finally:
            connection.close()
        self.stats.record(kind, (time.perf_counter() - started) * 1000, response.status)
        for line in response.msg.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(line).items():
                self.cookies[name] = morsel.value
        if response.status >= 500:
            self.stats.error(f"{method} {path}: HTTP {response.status}")
        return response.status, response, text

    def get(self, path, *, kind):
        return self.request("GET", path, kind=kind)

    def post(self, path, form, *, kind, htmx=False):
        form = {"csrfmiddlewaretoken": self.cookies.get("csrftoken", ""), **form}
        return self.request("POST", path, kind=kind, form=form, headers={"HX-Request": "true"} if htmx else None)


# The page shown after each training answer (annotation/_feedback.html).
FEEDBACK_MARK = 'class="item feedback"'


def _assignment_of(text):
    found = ASSIGNMENT_RE.search(text)
    return int(found.group(1)) if found else None


# One judge -----------------------------------------------------------------------------------


@dataclass
class Ledger:
    """What the clients saw: acknowledged answers, repeats, and pages that showed the wrong pair."""

    acknowledged: dict = field(default_factory=dict)  # (token, assignment) -> first acknowledged answer
    repeats: Counter = field(default_factory=Counter)  # double_click / back / resume
    mismatches: list = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)  # finished / turned_away / failed / out_of_time
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ack(self, token, assignment, answer):
        with self.lock:
            self.acknowledged.setdefault((token, assignment), answer)

    def note(self, counter, key):
        with self.lock:
            counter[key] += 1

    def mismatch(self, message):
        with self.lock:
            self.mismatches.append(message)


@dataclass
class Habits:
    """How often a judge does each odd thing (probabilities per item)."""

    double_click: float = 0.1
    go_back: float = 0.05
    reload: float = 0.1
    htmx: float = 0.7  # share of judges whose browser runs htmx; the others post plain forms
    resume: float = 0.2  # share of judges who come back once through the token link in a new browser
    think_ms: float = 0.0  # mean pause before each answer (exponential)


class JudgeFailed(Exception):
    pass


class SimulatedJudge:
    def __init__(self, number, port, slug, stats, ledger, habits, deadline, max_items):
        self.rng = random.Random(number)
        self.port, self.slug, self.stats, self.ledger, self.habits = port, slug, stats, ledger, habits
        self.deadline, self.max_items = deadline, max_items
        self.browser = Browser(port, stats)
        self.htmx = self.rng.random() < habits.htmx
        self.token = self.current = self.previous = None
        self.steps = 0
        self.resume_at = self.rng.randint(1, 15) if self.rng.random() < habits.resume else None

    def expect(self, status, wanted, what):
        if status not in wanted:
            raise JudgeFailed(f"{what}: HTTP {status}")

    def join(self):
        """Consent, English level, guidelines; False when the campaign turns the judge away."""
        status, _, text = self.browser.get(f"/j/{self.slug}/", kind="welcome")
        self.expect(status, {200}, "welcome")
        if 'name="consent"' not in text:
            return False
        status, response, _ = self.browser.post(f"/j/{self.slug}/", {"consent": "yes"}, kind="join")
        self.expect(status, {302}, "consent")
        # The redirect's path is the cookie path (/me/); the token itself is in the judge's cookie.
        self.token = next(value for name, value in self.browser.cookies.items() if name.startswith("parasol_judge_"))
        base = f"/j/{self.slug}/{self.token}"
        status, _, _ = self.browser.post(f"{base}/level/", {"english_level": "native"}, kind="level")
        self.expect(status, {302}, "english level")
        status, _, _ = self.browser.post(f"{base}/guidelines/", {}, kind="guidelines")
        self.expect(status, {302}, "guidelines")
        return True

    def show(self):
        """GET the item page: the assignment shown, or None at the end."""
        status, response, text = self.browser.get(f"/j/{self.slug}/{self.token}/", kind="show")
        if status == 302 and "/thanks/" in response.getheader("Location", ""):
            return None
        self.expect(status, {200}, "item page")
        assignment = _assignment_of(text)
        if assignment is None:
            raise JudgeFailed("item page without an assignment")
        return assignment

    def post_answer(self, assignment, answer, browser=None):
        """Post one answer; returns (acknowledged, next assignment or None, finished)."""
        browser = browser or self.browser
        form = {"assignment": str(assignment), "answer": answer, "response_ms": str(self.rng.randint(800, 9000))}
        status, response, text = browser.post(
            f"/j/{self.slug}/{self.token}/answer/", form, kind="answer", htmx=self.htmx
        )
        if self.htmx:
            if status != 200:
                return False, None, False
            if response.getheader("HX-Redirect"):
                return True, None, True
            return True, _assignment_of(text), False
        if status == 200 and FEEDBACK_MARK in text:
            return True, None, False  # a training answer's feedback page; its Continue link shows the next pair
        if status != 302:
            return False, None, False
        return True, None, "/thanks/" in response.getheader("Location", "")

    def double_click(self, assignment, answer):
        """The same answer posted twice at once, from the same browser."""
        results = [None, None]
        barrier = threading.Barrier(2, timeout=REQUEST_TIMEOUT)

        def click(index):
            barrier.wait()
            results[index] = self.post_answer(assignment, answer)

        threads = [threading.Thread(target=click, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(REQUEST_TIMEOUT * 2)
        if any(result is None for result in results):
            raise JudgeFailed("a double click did not return")
        self.ledger.note(self.ledger.repeats, "double_click")
        (ack1, next1, done1), (ack2, next2, done2) = results
        if self.htmx and ack1 and ack2 and (next1, done1) != (next2, done2):
            self.ledger.mismatch(f"{self.token}: a double click showed two different next pairs {next1}, {next2}")
        return (ack1 or ack2), next1 if ack1 else next2, done1 or done2

    def run(self):
        if not self.join():
            return "turned_away"
        self.current = self.show()
        return self.work(self.max_items) or "too_many_items"

    def work(self, items):
        """Answer up to `items` pairs from `self.current`; "finished", "out_of_time", or None if items ran out."""
        for _ in range(items):
            if self.current is None:
                self.browser.get(f"/j/{self.slug}/{self.token}/thanks/", kind="thanks")
                return "finished"
            if time.monotonic() > self.deadline:
                return "out_of_time"
            self.step()
        return None

    def step(self):
        """One pair: maybe reload or resume, think, answer (maybe twice), maybe go back; then the next pair."""
        current = self.current
        self.steps += 1
        if self.rng.random() < self.habits.reload:
            self.check_same(current, "a reload")
        if self.steps == self.resume_at:
            self.browser = Browser(self.port, self.stats)  # a fresh cookie jar: only the token link
            self.adopt()
            self.ledger.note(self.ledger.repeats, "resume")
            self.check_same(current, "resuming through the token link")
        if self.habits.think_ms:
            pause_ms = min(self.rng.expovariate(1 / self.habits.think_ms), 10 * self.habits.think_ms)
            time.sleep(min(pause_ms / 1000, max(0, self.deadline - time.monotonic())))
        answer = self.rng.choice(ANSWERS)
        if self.rng.random() < self.habits.double_click:
            acknowledged, following, finished = self.double_click(current, answer)
        else:
            acknowledged, following, finished = self.post_answer(current, answer)
        if not acknowledged:
            raise JudgeFailed(f"answer to assignment {current} not acknowledged")
        self.ledger.ack(self.token, current, answer)
        if self.previous is not None and self.rng.random() < self.habits.go_back:
            other = self.rng.choice([choice for choice in ANSWERS if choice != answer])
            self.post_answer(self.previous, other)  # the browser's back button, then another answer
            self.ledger.note(self.ledger.repeats, "back")
        self.previous = current
        if finished:
            self.current = None
        elif following is None:
            self.current = self.show()
        else:
            self.current = following

    def adopt(self):
        """A browser without the judge's cookie is asked before it continues their work: say yes."""
        status, _, text = self.browser.get(f"/j/{self.slug}/{self.token}/", kind="resume")
        self.expect(status, {200}, "resume confirmation")
        status, _, _ = self.browser.post(f"/j/{self.slug}/{self.token}/resume/", {}, kind="resume")
        self.expect(status, {302}, "resume")

    def check_same(self, assignment, how):
        shown = self.show()
        if shown != assignment:
            self.ledger.mismatch(f"{self.token}: {how} showed assignment {shown} instead of {assignment}")


def run_judges(port, slug, *, judges, habits, time_limit, max_items, stagger_s=1.0):
    """Run the simulated judges concurrently; returns (stats, ledger, wall seconds)."""
    stats, ledger = Stats(), Ledger()
    deadline = time.monotonic() + time_limit

    def one(number):
        time.sleep(random.Random(-number).uniform(0, stagger_s))  # judges arrive over time, not all at once
        judge = SimulatedJudge(number, port, slug, stats, ledger, habits, deadline, max_items)
        try:
            outcome = judge.run()
        except (JudgeFailed, OSError, http.client.HTTPException, threading.BrokenBarrierError) as error:
            stats.error(f"judge {number}: {error.__class__.__name__}: {error}")
            outcome = "failed"
        ledger.note(ledger.outcomes, outcome)

    threads = [threading.Thread(target=one, args=(n,), daemon=True) for n in range(judges)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.1, deadline - time.monotonic() + REQUEST_TIMEOUT * 3))
    stuck = sum(thread.is_alive() for thread in threads)
    if stuck:
        stats.error(f"{stuck} judge threads still running after the time limit")
    return stats, ledger, time.perf_counter() - started


# The campaign and the invariants (Django ORM, in this process) ---------------------------------


SUBJECTS = ["The committee", "A young farmer", "Our neighbour", "The old bridge", "Every pilot", "The report"]
VERBS = ["approved", "repaired", "described", "ignored", "praised", "delayed"]
OBJECTS = ["the new budget", "a broken fence", "the river crossing", "the early flight", "the long winter"]


def corpus_csv(count, seed=0):
    """`count` synthetic pairs, as CSV bytes."""
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "source", "hypothesis"])
    for i in range(count):
        subject, verb, thing = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
        source = f"{subject} {verb} {thing} on day {i}."
        hypothesis = f"On day {i}, {subject.lower()} {rng.choice(VERBS)} {thing}."
        writer.writerow([f"p{i}", source, hypothesis])
    return out.getvalue().encode()


def make_campaign(slug, *, pairs, overlap, per_judge, control_share=0.0):
    """An open campaign with synthetic pairs and the default training trial; returns it."""
    from annotation.controls import protocol_of
    from campaigns.importers import import_pairs
    from campaigns.models import Campaign

    campaign = Campaign.objects.create(
        slug=slug, name=f"Load {slug}", pairs_per_judge=per_judge, overlap_target=overlap
    )
    protocol = protocol_of(campaign)
    protocol.control_share = control_share
    protocol.save()
    campaign.ensure_training_pairs()
    import_pairs(campaign, corpus_csv(pairs), format="csv")
    return campaign


def _replay_least_loaded(campaign):
    """Replay real-pair assignments in creation order; each must have taken a least-loaded unseen pair."""
    from annotation.models import Assignment

    load = dict.fromkeys(campaign.real_pairs.values_list("pk", flat=True), 0)
    seen = defaultdict(set)
    violations = []
    rows = Assignment.objects.filter(judge__campaign=campaign).order_by("pk").values_list("judge_id", "pair_id")
    for judge_id, pair_pk in rows:
        if pair_pk in load:
            open_loads = [n for pk, n in load.items() if n < campaign.overlap_target and pk not in seen[judge_id]]
            if load[pair_pk] >= campaign.overlap_target or load[pair_pk] != min(open_loads):
                violations.append(f"pair {pair_pk} taken at load {load[pair_pk]}, lowest open {min(open_loads)}")
            load[pair_pk] += 1
        seen[judge_id].add(pair_pk)
    return violations, load


def check_invariants(slug, stats, ledger):
    """[(name, passed, detail)] for the guarantees listed in the module docstring."""
    from django.db.models import Count, F
    from django.db.models.fields.json import KT

    from annotation.models import Assignment, Judgment
    from campaigns.models import Campaign

    campaign = Campaign.objects.get(slug=slug)
    judgments = Judgment.objects.filter(judge__campaign=campaign)
    doubled = judgments.values("assignment").annotate(n=Count("pk")).filter(n__gt=1).count()
    crossed = judgments.exclude(judge_id=F("assignment__judge_id")).count()
    crossed += judgments.exclude(pair_id=F("assignment__pair_id")).count()
    stored = {
        (token, assignment): answer
        for token, assignment, answer in judgments.values_list("judge__token", "assignment_id", KT("values__answer"))
    }
    lost = [key for key in ledger.acknowledged if key not in stored]
    changed = [key for key, answer in ledger.acknowledged.items() if key in stored and stored[key] != answer]
    real = Assignment.objects.filter(judge__campaign=campaign, pair__in=campaign.real_pairs)
    overfilled = real.values("pair").annotate(n=Count("pk")).filter(n__gt=campaign.overlap_target).count()
    violations, load = _replay_least_loaded(campaign)
    pair_counts = Counter(load.values())
    results = [
        ("one judgment per (judge, assignment)", doubled == 0 and crossed == 0, f"{judgments.count()} judgments"),
        ("no acknowledged answer lost", not lost, f"{len(ledger.acknowledged)} acknowledged, {len(lost)} lost"),
        (
            "repeated answers changed nothing",
            not changed,
            f"{sum(ledger.repeats.values())} repeats {dict(ledger.repeats)}, {len(changed)} changed",
        ),
        (
            "no pair over the overlap target",
            overfilled == 0,
            f"overlap {campaign.overlap_target}; pairs by load {dict(sorted(pair_counts.items()))}",
        ),
        ("least-judged first (replayed)", not violations, "; ".join(violations[:3]) or "every assignment"),
        ("reload/resume/double click show the current pair", not ledger.mismatches, "; ".join(ledger.mismatches[:3])),
        ("no server errors", not stats.errors, "; ".join(stats.errors[:3])),
    ]
    return results


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def latency_lines(stats, seconds):
    server_errors = sum(n for status, n in stats.statuses.items() if status >= 500)
    lines = [
        f"{stats.requests} requests in {seconds:.1f} s: {stats.requests / seconds:.1f} requests/s",
        f"HTTP errors (5xx): {server_errors} (target 0); statuses {dict(sorted(stats.statuses.items()))}",
    ]
    for kind in ("show", "answer", *sorted(set(stats.latencies) - {"show", "answer"})):
        values = stats.latencies.get(kind)
        if not values:
            continue
        p50, p95, p99 = (percentile(values, f) for f in (0.5, 0.95, 0.99))
        flag = "" if kind not in ("show", "answer") else ("  ok" if p95 < TARGET_P95_MS else "  OVER TARGET")
        lines.append(
            f"  {kind:<10} n={len(values):>5}  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  p99 {p99:6.1f} ms"
            f"  mean {statistics.fmean(values):6.1f} ms{flag}"
        )
    return lines


# The stack -----------------------------------------------------------------------------------


def start_gunicorn(env, port, workers=4):
    command = [
        sys.executable, "-m", "gunicorn", "parasol.wsgi", "-w", str(workers), "-b", f"127.0.0.1:{port}",
        "--timeout", "60", "--graceful-timeout", "5", "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPO, env=env)
    try:
        # The port opens before a worker has imported the app (seconds, a minute on a loaded machine): wait for an
        # answer, and stop waiting at once if gunicorn exits (a worker that fails to boot stops it).
        servers.wait_for_answer(port, "/accounts/login/", process)
    except RuntimeError:
        servers.stop(process)
        raise
    return process


def warm_up(port, workers, rounds=15):
    """Each gunicorn worker imports Django on its first request (seconds): get that out of the figures."""
    stats = Stats()
    for _ in range(rounds):
        timings = []

        def hit(timings=timings):
            started = time.perf_counter()
            try:
                Browser(port, stats).get("/accounts/login/", kind="warm-up")
            except (OSError, http.client.HTTPException):
                return  # still booting: the next round tries again
            timings.append(time.perf_counter() - started)

        threads = [threading.Thread(target=hit) for _ in range(workers * 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(REQUEST_TIMEOUT)
        if timings and max(timings) < 0.5:
            return


def server_env(database_env, redis_url, metrics="lev,bleu"):
    """Production-like settings for child processes: DEBUG off, no HTTPS redirect, joins and answers unlimited."""
    env = dict(os.environ, REDIS_URL=redis_url, CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url)
    env.update(database_env)
    env.update(
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_SSL_REDIRECT="false",
        DJANGO_SECURE_COOKIES="false",
        DJANGO_HSTS_SECONDS="0",
        PARASOL_JOINS_PER_HOUR="1000000",
        PARASOL_MAX_ANSWERS_PER_MINUTE="1000000",  # simulated judges answer without reading
        PARASOL_METRICS=metrics,
        PARASOL_LOG_LEVEL="WARNING",
        PYTHONWARNINGS="ignore:No directory at:UserWarning",  # no collectstatic for a load test
    )
    return env


@contextmanager
def stack(args):
    """Database, Redis, migrations, gunicorn and a Celery worker; yields (port, env).

    With --sqlite the database is a fresh SQLite file configured exactly as the
    embedded default (settings.sqlite_database: WAL, busy timeout, IMMEDIATE).
    """
    from tests.pgserver import postgres_server

    with ExitStack() as cleanup:
        if args.sqlite:
            path = REPO / "var" / f"load-{os.getpid()}.sqlite3"
            path.parent.mkdir(exist_ok=True)
            cleanup.callback(lambda: [p.unlink(missing_ok=True) for p in path.parent.glob(path.name + "*")])
            database = {"SQLITE_PATH": str(path)}
        else:
            database = {"DATABASE_URL": cleanup.enter_context(postgres_server())}
        redis_url = cleanup.enter_context(servers.redis_server())
        env = server_env(database, redis_url)
        # This process reads the campaign and the ledger through Django too, under the servers' settings.
        shared = (*database, "REDIS_URL", "CELERY_BROKER_URL", "PARASOL_METRICS", "DJANGO_DEBUG", "DJANGO_SECRET_KEY")
        os.environ.update({k: env[k] for k in shared})
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True)
        port = servers.free_port()
        web = start_gunicorn(env, port, workers=args.web_workers)
        cleanup.callback(servers.stop, web)
        warm_up(port, args.web_workers)
        worker = servers.start_worker(redis_url, database, extra_env={"PARASOL_METRICS": "lev,bleu"})
        cleanup.callback(servers.stop, worker)
        yield port, env


def wait_for_scores(slug, metrics, timeout):
    from campaigns.models import Campaign, Score

    campaign = Campaign.objects.get(slug=slug)
    wanted = campaign.real_pairs.count() * len(metrics)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = Score.objects.filter(pair__campaign=campaign, metric__in=metrics).count()
        if done >= wanted:
            break
        time.sleep(0.5)
    return done, wanted


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judges", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=300)
    parser.add_argument("--overlap", type=int, default=3)
    parser.add_argument("--per-judge", type=int, default=20)
    parser.add_argument("--controls", type=float, default=0.0, help="control share (0 turns controls off)")
    parser.add_argument(
        "--think-ms", type=float, default=8000, help="mean pause before each answer (0: as fast as possible)"
    )
    parser.add_argument("--arrival-s", type=float, default=30, help="judges arrive at random within this many seconds")
    parser.add_argument("--time-limit", type=float, default=300, help="seconds the judges may run")
    parser.add_argument("--web-workers", type=int, default=4)
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of a throwaway PostgreSQL")
    args = parser.parse_args(argv)
    # A plain `kill` must still stop the servers this script started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with stack(args) as (port, _env):
        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
        django.setup()
        slug = "load"
        make_campaign(
            slug, pairs=args.pairs, overlap=args.overlap, per_judge=args.per_judge, control_share=args.controls
        )
        habits = Habits(think_ms=args.think_ms)
        max_items = 5 + args.per_judge * 2 + 10
        print(
            f"{args.judges} judges, {args.pairs} pairs, overlap {args.overlap}, {args.per_judge} per judge, "
            f"think {args.think_ms:.0f} ms, arrivals over {args.arrival_s:.0f} s, "
            f"{'SQLite' if args.sqlite else 'PostgreSQL'}, gunicorn -w {args.web_workers}, {os.cpu_count()} CPUs",
            flush=True,
        )
        stats, ledger, seconds = run_judges(
            port,
            slug,
            judges=args.judges,
            habits=habits,
            time_limit=args.time_limit,
            max_items=max_items,
            stagger_s=args.arrival_s,
        )
        print("\n".join(latency_lines(stats, seconds)))
        print(f"judges: {dict(ledger.outcomes)}")
        scored, wanted = wait_for_scores(slug, ["lev", "bleu"], timeout=60)
        print(f"scores stored by the worker meanwhile: {scored}/{wanted}")
        results = check_invariants(slug, stats, ledger)
        for name, passed, detail in results:
            print(f"{'PASS' if passed else 'FAIL'}  {name}: {detail}")
        failed = [name for name, passed, _ in results if not passed]
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
