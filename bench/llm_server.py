"""ParaPLUIE pairs/s through llama.cpp's server at 1, 4 and 16 concurrent requests, against in-process.

Both run the embedded SmolLM2-135M-Instruct GGUF on the same CPU: in-process, transformers
de-quantises it to float32 and batches pairs on a shared-prefix KV cache; the server
(`python -m llama_cpp.server`, started here on a free 127.0.0.1 port) runs the quantised
file with llama.cpp's kernels, one request per pair. Prints pairs/s and the ratio to
in-process. Not a test: it prints numbers. On a shared machine the figures move with the load.

    python bench/llm_server.py --pairs 32 --metric parapluie_direct --threads 2
"""

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.metrics import get_metric  # noqa: E402
from scoring.metrics.backends import parse_backends  # noqa: E402
from scoring.metrics.loading import embedded_smollm2_path, model_revision  # noqa: E402
from tests.servers import REPO, llama_cpp_server  # noqa: E402


def demo_pairs(n):
    rows = [json.loads(line) for line in (REPO / "fixtures" / "demo_pairs.jsonl").read_text().splitlines()]
    rows = (rows * (n // len(rows) + 1))[:n]
    return [row["source"] for row in rows], [row["hypothesis"] for row in rows]


def rate(metric, sources, hypotheses):
    metric.score(sources=sources[:2], hypotheses=hypotheses[:2])  # warm: model, connections, prefix
    start = time.perf_counter()
    metric.score(sources=sources, hypotheses=hypotheses)
    return len(sources) / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=32)
    parser.add_argument("--metric", default="parapluie_direct")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads (torch uses its own setting)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    args = parser.parse_args()
    sources, hypotheses = demo_pairs(args.pairs)
    in_process = rate(get_metric(args.metric, device="cpu", dtype="float32"), sources, hypotheses)
    print(f"{args.metric}, {args.pairs} demo pairs, embedded SmolLM2 GGUF, CPU")
    print(f"in-process (transformers, float32, batched): {in_process:8.2f} pairs/s")
    with llama_cpp_server(embedded_smollm2_path(), threads=args.threads) as url:
        declared = {"base_url": url, "model": "smollm2", "revision": model_revision(str(embedded_smollm2_path()))}
        backend = parse_backends(json.dumps({"llama": declared}))["llama"]
        for concurrency in args.concurrency:
            served = rate(
                get_metric(args.metric, backend=replace(backend, max_concurrency=concurrency)), sources, hypotheses
            )
            print(f"llama.cpp server, {concurrency:2d} concurrent: {served:8.2f} pairs/s  ({served / in_process:.2f}x)")


if __name__ == "__main__":
    main()
