"""ParaPLUIE pairs/s through llama.cpp's server at 1, 4 and 16 concurrent requests, against in-process.

Both run the embedded SmolLM2-135M-Instruct GGUF on the same CPU with the same number of threads:
in-process, transformers de-quantises it to float32 and batches pairs on a shared-prefix KV cache;
the server (`python -m llama_cpp.server`, started here on a free 127.0.0.1 port) runs the quantised
file with llama.cpp's kernels, one request per pair. Prints pairs/s, the ratio to in-process, and how
far the served scores are from the in-process ones on the same pairs (INDIRECT: on the same
explanations, so only the reading of the answer differs; then end to end, each side explaining).
Not a test: it prints numbers. On a shared machine the figures move with the load (printed).

    python bench/llm_server.py --pairs 32 --metrics parapluie_direct parapluie_fs_direct --threads 2
"""

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from metrics import get_metric  # noqa: E402
from metrics.backends import parse_backends  # noqa: E402
from metrics.loading import embedded_smollm2_path, model_revision  # noqa: E402
from tests.servers import REPO, llama_cpp_server  # noqa: E402


def demo_pairs(n):
    rows = [json.loads(line) for line in (REPO / "fixtures" / "demo_pairs.jsonl").read_text().splitlines()]
    rows = (rows * (n // len(rows) + 1))[:n]
    return [row["source"] for row in rows], [row["hypothesis"] for row in rows]


def timed(metric, sources, hypotheses):
    """(pairs/s, scores) of one scoring call, after a warm-up on two pairs (model, connections, prefix)."""
    metric.score(sources=sources[:2], hypotheses=hypotheses[:2])
    start = time.perf_counter()
    scores = metric.score(sources=sources, hypotheses=hypotheses)
    return len(sources) / (time.perf_counter() - start), scores


def gaps(served, in_process):
    differences = [abs(a - b) for a, b in zip(served, in_process)]
    return f"|served - in-process| max {max(differences):.3f}, mean {sum(differences) / len(differences):.3f}"


def same_explanations_gap(served, in_process, sources, hypotheses):
    """INDIRECT: both read the answer after the server's explanations; only the arithmetic differs."""
    explanations = served.explain(sources, hypotheses)
    triples = list(zip(sources, hypotheses, explanations))
    read = [served.server_log_odds(served.prompt(*triple)) for triple in triples]
    local = in_process.score_sequences([in_process.sequence_ids(*triple) for triple in triples])
    return gaps(read, local)


def load():
    return f"load average {os.getloadavg()[0]:.2f} over 1 min on {os.cpu_count()} cores"


def bench_metric(name, backend, sources, hypotheses, concurrencies):
    in_process_metric = get_metric(name, device="cpu", dtype="float32")
    in_process, local_scores = timed(in_process_metric, sources, hypotheses)
    print(f"\n{name}, {len(sources)} demo pairs ({load()})")
    print(f"  in-process (transformers, float32, batched): {in_process:8.2f} pairs/s")
    served_scores = None
    for concurrency in concurrencies:
        metric = get_metric(name, backend=replace(backend, max_concurrency=concurrency))
        served, served_scores = timed(metric, sources, hypotheses)
        print(f"  llama.cpp server, {concurrency:2d} concurrent: {served:8.2f} pairs/s  ({served / in_process:.2f}x)")
    print(f"  agreement: {gaps(served_scores, local_scores)}")
    if name == "parapluie_indirect":
        same = same_explanations_gap(metric, in_process_metric, sources, hypotheses)
        print(f"  agreement on the same explanations: {same}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--metrics", nargs="+", default=["parapluie_direct", "parapluie_fs_direct"])
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp's threads and torch's")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sources, hypotheses = demo_pairs(args.pairs)
    print(f"Embedded SmolLM2-135M-Instruct GGUF, CPU, {args.threads} thread(s) each; {load()}")
    with llama_cpp_server(embedded_smollm2_path(), threads=args.threads) as url:
        declared = {
            "base_url": url,
            "model": "smollm2",
            "revision": model_revision(str(embedded_smollm2_path())),
            "max_logprobs": 10**6,  # llama-cpp-python returns as many as asked: an answer is never missing
            "timeout": 600,
        }
        backend = parse_backends(json.dumps({"llama": declared}))["llama"]
        for name in args.metrics:
            bench_metric(name, backend, sources, hypotheses, args.concurrency)


if __name__ == "__main__":
    main()
