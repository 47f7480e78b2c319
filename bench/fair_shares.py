"""Campaign B's report latency and time to fully scored, without and with campaign A's import being scored.

    .venv/bin/python bench/fair_shares.py [--a-pairs 5000] [--give-up 600]

Not a test. A throwaway SQLite database and Redis, three real Celery workers: one on `gpu`
(the LLM metric), one on `cpu`, one on `reports,training,generation`. Metrics: Levenshtein
and ParaPLUIE (DIRECT) on the embedded SmolLM2, in the workers, with the default batch sizes
(LLM batches sized from the measured speed to PARASOL_SCORING_BATCH_SECONDS, 60 s, at most
64 pairs) and one batch per campaign and metric in flight, the setting for one worker per
queue. B has 60 gold-labelled pairs; its report is forced to the reports worker
(PARASOL_REPORT_INLINE_MAX_PAIRS=0); latency runs from the request that queues B's pairs to
the request that finds the report. Targets: report within 30 s; B fully scored before A.
A run stops once B is done (A's LLM scoring would take a quarter of an hour on two cores):
what A has then is printed, then A is deleted so the next run starts quiet. A last run queues
every batch at import, as Parasol did before fair shares, for comparison; it gives up on B
after --give-up seconds.
"""

import argparse
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.servers import wait_until  # noqa: E402 (needs the repository on the path)

METRICS = "lev,parapluie_direct"
LLM = "parapluie_direct"
B_PAIRS = 60


def campaign_with(slug, n):
    from campaigns.models import Campaign, Pair

    campaign = Campaign.objects.create(slug=slug, name=slug)
    Pair.objects.bulk_create(
        Pair.build(campaign, external_id=f"p{i}", source=f"Source sentence {i} of {slug}.",
                   hypothesis=f"Hypothesis sentence {i} of {slug}.", gold_label=i % 2)
        for i in range(n)
    )  # fmt: skip
    return campaign, list(campaign.pairs.order_by("pk").values_list("pk", flat=True))


def scored(campaign, metric=None):
    from campaigns.models import Score

    scores = Score.objects.filter(pair__campaign=campaign)
    return (scores.filter(metric=metric) if metric else scores).count()


def quiet():
    """Nothing queued, nothing held by a worker: the next run starts on idle workers."""
    from parasol import queues

    return not any(queues.queue_lengths().values()) and not queues.held_tasks()


def scenario(label, a_pairs, give_up):
    """Import A (if any) and wait for its LLM scoring to start, then B: print B's report and scoring times."""
    from reports.tasks import report_or_status
    from scoring.tasks import queue_scoring

    a = None
    if a_pairs:
        a, a_pks = campaign_with(f"a-{label}", a_pairs)
        queue_scoring(a_pks, campaign_pk=a.pk)
        if not wait_until(lambda: scored(a, LLM) >= 8, timeout=give_up):
            raise SystemExit("A's LLM scoring never started (is the gpu worker down?)")
    b, b_pks = campaign_with(f"b-{label}", B_PAIRS)
    started = time.monotonic()
    queue_scoring(b_pks, campaign_pk=b.pk)
    report, _status = report_or_status([b], "gold")
    assert report is None, "the report was computed in the request"
    seen = {}  # the first moment each is true, both watched in one loop

    def both():
        now = time.monotonic() - started
        if "report" not in seen and report_or_status([b], "gold")[0] is not None:
            seen["report"] = now
        if "b" not in seen and scored(b) == 2 * B_PAIRS:
            seen["b"], seen["a_then"] = now, scored(a, LLM) if a else 0
        return len(seen) == 3

    finished = wait_until(both, timeout=give_up, interval=0.05)
    a_then = scored(a, LLM) if a else 0
    report = f"{seen['report']:5.1f} s" if "report" in seen else f"not within {give_up} s"
    b_done = f"{seen['b']:5.1f} s" if finished else f"not within {give_up} s (B's {LLM}: {scored(b, LLM)}/{B_PAIRS})"
    line = f"{label:>13}: B's report {report} (target 30 s); B fully scored {b_done}"
    if a:
        first = "yes" if finished and seen["a_then"] < a_pairs else "NO"
        line += f"; A's {LLM} scores then: {seen.get('a_then', a_then)}/{a_pairs}: B done first: {first}"
        a.delete()  # its queued batch finds no pairs, and its pass ends
        wait_until(quiet, timeout=give_up, interval=0.5)
    print(line, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a-pairs", type=int, default=5000)
    parser.add_argument("--give-up", type=int, default=600, help="seconds a run waits for B before it says so")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="parasol-fair-"))
    settings_env = dict(
        DJANGO_SETTINGS_MODULE="parasol.settings",
        DJANGO_DEBUG="true",
        SQLITE_PATH=str(folder / "fair.sqlite3"),
        PARASOL_CACHE_DIR=str(folder / "cache"),
        PARASOL_SCORE_ON_CREATE="false",
        PARASOL_METRICS=METRICS,
        PARASOL_SCORING_BATCHES_PER_CAMPAIGN="1",  # one worker per scoring queue
        PARASOL_REPORT_INLINE_MAX_PAIRS="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        PYTHONPATH=str(REPO),
    )
    from tests import servers

    workers = [
        {"queues": "gpu", "name": "llm"},
        {"queues": "cpu", "name": "scorer"},
        {"queues": "reports,training,generation", "name": "interactive"},
    ]
    with servers.workers_for_a_script(settings_env, workers):
        print(f"Fair shares: B = {B_PAIRS} pairs, A = {args.a_pairs} pairs, {METRICS}; one gpu, one cpu and one "
              f"interactive worker; {os.cpu_count()} CPU(s), SQLite in {folder}", flush=True)  # fmt: skip
        scenario("B alone", 0, args.give_up)  # its first LLM batch loads the model
        scenario("B alone, warm", 0, args.give_up)
        scenario("B beside A", args.a_pairs, args.give_up)
        # The queues as they were: every batch of an import queued at once (no share to wait for).
        from django.conf import settings

        settings.PARASOL_SCORING_BATCHES_PER_CAMPAIGN = 10**9
        scenario("first come", args.a_pairs, args.give_up)


if __name__ == "__main__":
    main()
