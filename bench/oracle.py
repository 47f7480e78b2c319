"""LLM oracle cost and behaviour: oracle calls per pair, pairs/s, and agreement with the fixture's labels.

    python bench/oracle.py                                  # embedded SmolLM2, CPU, demo pairs, k=5, m=5
    python bench/oracle.py --limit 10 --k 3 --m 2 --json out.json

An oracle call is one generated reply (k votes, one per phrase question, m paraphrases
per sentence, one per attribution). Not a test: it prints numbers. The embedded 135M
model is a working pipeline, not a judge: expect agreement near chance.
"""

import argparse
import json
import sys
import time
from collections import Counter
from itertools import zip_longest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from metrics import get_metric  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def read_pairs(path, limit):
    """The pairs, or `limit` of them taken alternately from each label (the demo file lists paraphrases first)."""
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not limit:
        return rows
    by_label = [[row for row in rows if row["label"] == label] for label in (1, 0)]
    alternating = [row for pair in zip_longest(*by_label) for row in pair if row is not None]
    return alternating[:limit]


def share(part, whole):
    return round(part / whole, 3) if whole else None


def behaviour(rows, details):
    """Verdicts against the labels, unparseable answers, self-consistency and (llm_checked) acceptance."""
    labels = [row["label"] for row in rows]
    answers = Counter(answer for detail in details for answer in detail["answers"])
    verdicts = [detail["verdict"] for detail in details]
    agree = sum(verdict == {1: "yes", 0: "no"}[label] for verdict, label in zip(verdicts, labels))
    summary = {
        "answers": dict(answers),
        "verdicts": dict(Counter(str(v) for v in verdicts)),
        "agreement_with_label": share(agree, len(rows)),
        "yes_share_paraphrase": share(sum(v == "yes" for v, y in zip(verdicts, labels) if y == 1), labels.count(1)),
        "yes_share_non_paraphrase": share(sum(v == "yes" for v, y in zip(verdicts, labels) if y == 0), labels.count(0)),
        "mean_consistency": round(sum(d["consistency"] for d in details) / len(details), 3),
    }
    if "accepted" in details[0]:
        for verdict in ("yes", "no"):
            of_verdict = [d for d in details if d["verdict"] == verdict]
            summary[f"accepted_{verdict}"] = f"{sum(d['accepted'] for d in of_verdict)}/{len(of_verdict)}"
        yes_checked = [d["yes_check"] for d in details if "yes_check" in d]
        summary["phi_or"] = f"{sum(c['phi_or'] for c in yes_checked)}/{len(yes_checked)}"
        summary["phi_and"] = f"{sum(c['phi_and'] for c in yes_checked)}/{len(yes_checked)}"
        right = [d["verdict"] == {1: "yes", 0: "no"}[y] for d, y in zip(details, labels)]
        for group, keep in (("accepted", True), ("rejected", False)):
            chosen = [r for r, d in zip(right, details) if d["verdict"] in ("yes", "no") and d["accepted"] == keep]
            summary[f"accuracy_{group}"] = f"{sum(chosen)}/{len(chosen)}"
    return summary


def run(name, rows, options):
    metric = get_metric(name, **options)
    sources, hypotheses = [r["source"] for r in rows], [r["hypothesis"] for r in rows]
    metric.score_with_details(sources=sources[:1], hypotheses=hypotheses[:1])  # warm-up: first-call overheads
    calls = metric.oracle.calls
    start = time.perf_counter()
    _scores, details = metric.score_with_details(sources=sources, hypotheses=hypotheses)
    seconds = time.perf_counter() - start
    return {
        "metric": name,
        "pairs": len(rows),
        "seconds": round(seconds, 1),
        "pairs_per_s": round(len(rows) / seconds, 3),
        "oracle_calls_per_pair": round((metric.oracle.calls - calls) / len(rows), 1),
        **behaviour(rows, details),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default=str(REPO / "fixtures" / "demo_pairs.jsonl"))
    parser.add_argument("--limit", type=int, default=0, help="N pairs, alternately of each label (0: all)")
    parser.add_argument("--metrics", nargs="+", default=["llm_vote", "llm_checked"])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = read_pairs(args.pairs, args.limit)
    results = []
    for name in args.metrics:
        options = {"k": args.k, "device": args.device, "dtype": args.dtype, "batch_size": args.batch_size}
        if name == "llm_checked":
            options["m"] = args.m
        result = run(name, rows, options)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
