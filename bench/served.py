"""LLM scoring through real workers: a served backend fed at 1, 8 and 64 requests in flight, and the in-process
worker path beside `bench/parapluie.py`'s rate, side by side in one run.

    .venv/bin/python bench/served.py [--latency 0.5] [--waves 12] [--local-pairs 120] [--skip-local]

Not a test: it prints numbers. A throwaway SQLite database and Redis, real Celery workers:
- Served: one `served` worker (`--pool threads --concurrency 4`) against bench/paced_server.py, a stand-in for
  a server with continuous batching that serves up to 64 requests at once, each in `--latency` seconds (so it
  allows 64 / latency requests per second). Three backends on it, max_concurrency 1, 8 and 64; a campaign of
  `waves` x max_concurrency pairs per backend, ParaPLUIE DIRECT (one request per pair), timed from queueing
  its pairs to the last score stored. Printed: pairs/s, its ratio to what that concurrency allows
  (max_concurrency / latency) and to what the server allows (64 / latency); target >= 80 % of the server at 64.
- In-process: one `gpu` worker (prefork, one process, as `make demo` runs it) scores `--local-pairs` pairs
  with ParaPLUIE DIRECT on the embedded SmolLM2 (its model loaded by a first campaign beforehand), timed the
  same way; beside it, this process scores the same pairs the way `bench/parapluie.py` times its real scorer
  (one `score` call, model loaded, torch's default threads). Target: the worker within 1.5x of the bench.
The load average is printed with each figure: on a shared machine they move with it.
"""

import argparse
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.paced_server import PacedServer, parapluie_logprobs  # noqa: E402
from tests.servers import wait_until  # noqa: E402 (needs the repository on the path)

LLM = "parapluie_direct"
CONCURRENCIES = (1, 8, 64)


def load():
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)"


def campaign_with(slug, n, backend=None):
    from bench.parapluie import generate_pairs
    from campaigns.models import Campaign, Pair

    campaign = Campaign.objects.create(slug=slug, name=slug)
    if backend:
        campaign.choose_llm_backends({LLM: backend})
    sources, hypotheses = generate_pairs(n)
    Pair.objects.bulk_create(
        Pair.build(campaign, external_id=f"p{i}", source=s, hypothesis=h)
        for i, (s, h) in enumerate(zip(sources, hypotheses, strict=True))
    )
    return campaign, list(campaign.pairs.order_by("pk").values_list("pk", flat=True))


def timed_scoring(slug, n, backend=None, give_up=900):
    """Seconds from queueing the campaign's pairs to its last score stored (None if not within `give_up`)."""
    from campaigns.models import Score
    from scoring.tasks import queue_scoring

    campaign, pks = campaign_with(slug, n, backend)
    started = time.monotonic()
    queue_scoring(pks, metrics=[LLM], campaign_pk=campaign.pk)
    done = lambda: Score.objects.filter(pair__campaign=campaign, metric=LLM).count() == n  # noqa: E731
    return time.monotonic() - started if wait_until(done, timeout=give_up, interval=0.05) else None


def served_runs(server, waves):
    print(f"\nServed: a fake server of 64 requests at once, {server.latency} s each: it allows "
          f"{server.allowed_per_second():.0f} requests/s; one served worker, 4 threads", flush=True)  # fmt: skip
    for concurrency in CONCURRENCIES:
        timed_scoring(f"warm-{concurrency}", concurrency, f"lab{concurrency}")  # the tokenizer, the connections
        server.reset()
        n = waves * concurrency
        seconds = timed_scoring(f"served-{concurrency}", n, f"lab{concurrency}")
        if seconds is None:
            print(f"  {concurrency:2d} in flight: not done in time", flush=True)
            continue
        rate = n / seconds
        own, whole = rate / (concurrency / server.latency), rate / server.allowed_per_second()
        target = f"  (target >= 80 %: {'met' if whole >= 0.8 else 'NOT met'})" if concurrency == 64 else ""
        print(f"  {concurrency:2d} in flight: {n:4d} pairs in {seconds:6.1f} s = {rate:7.1f} pairs/s; "
              f"{own:6.1%} of what {concurrency} in flight allows, {whole:6.1%} of the server{target}; "
              f"peak {server.peak} in flight, {server.served} requests; {load()}", flush=True)  # fmt: skip


def local_runs(n):
    from bench.parapluie import generate_pairs
    from metrics import get_metric

    timed_scoring("local-warm", 8)  # the worker loads the model
    seconds = timed_scoring("local", n)
    worker = n / seconds if seconds else None
    worker_load = load()
    metric = get_metric(LLM)
    sources, hypotheses = generate_pairs(n)
    metric.score(sources=sources[:2], hypotheses=hypotheses[:2])  # as bench/parapluie.py: warm first
    started = time.perf_counter()
    metric.score(sources=sources, hypotheses=hypotheses)
    bench = n / (time.perf_counter() - started)
    print(f"\nIn-process ParaPLUIE DIRECT, embedded SmolLM2, {n} pairs, side by side:")
    print(f"  bench/parapluie.py's way (one score call, this process): {bench:6.2f} pairs/s; {load()}")
    if worker is None:
        print("  gpu worker: not done in time")
        return
    ratio = bench / worker
    print(f"  gpu worker (Redis, batches, stored): {worker:6.2f} pairs/s; {worker_load}")
    print(f"  bench / worker: {ratio:.2f}x (target <= 1.5x: {'met' if ratio <= 1.5 else 'NOT met'})", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake server takes per request")
    parser.add_argument("--waves", type=int, default=12, help="pairs per campaign, in multiples of max_concurrency")
    parser.add_argument("--local-pairs", type=int, default=120)
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-served", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="parasol-served-"))
    with PacedServer(capacity=64, latency=args.latency, top_logprobs=parapluie_logprobs()) as server:
        backends = {
            f"lab{c}": {"base_url": server.url, "model": "smollm2", "revision": "paced", "max_concurrency": c,
                        "retries": 0, "timeout": 60}
            for c in CONCURRENCIES
        }  # fmt: skip
        settings_env = dict(
            DJANGO_SETTINGS_MODULE="parasol.settings",
            DJANGO_DEBUG="true",
            SQLITE_PATH=str(folder / "served.sqlite3"),
            PARASOL_CACHE_DIR=str(folder / "cache"),
            PARASOL_SCORE_ON_CREATE="false",
            PARASOL_METRICS=LLM,
            PARASOL_LLM_BACKENDS=json.dumps(backends),
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            PYTHONPATH=str(REPO),
        )
        from tests import servers

        workers = [{"queues": "served", "name": "served", "pool": "threads", "concurrency": 4}]
        if not args.skip_local:
            workers.append({"queues": "gpu", "name": "gpu", "pool": "prefork"})
        with servers.workers_for_a_script(settings_env, workers):
            print(f"Served and in-process LLM scoring through real workers; {load()}", flush=True)
            if not args.skip_served:
                served_runs(server, args.waves)
            if not args.skip_local:
                local_runs(args.local_pairs)


if __name__ == "__main__":
    main()
