"""The measured side of the metric cards: mean per label, best accuracy and EER of each metric on a corpus file.

    python bench/metric_cards.py [--corpus fixtures/mrpc_sample.tsv] [--metrics lev bleu ...]

The file is MRPC's TSV (Quality, #1 ID, #2 ID, #1 String, #2 String); #1 is the source S,
#2 the hypothesis H. Default metrics: every registered metric that needs no LLM. Not a test.
"""

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics import get_metric  # noqa: E402
from reports.analysis.classification import best_threshold, equal_error_rate, scan_thresholds  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_METRICS = ["lev", "bleu", "meteor", "wer", "bertscore", "parascore", "sbert"]


def read_mrpc(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return [r["#1 String"] for r in rows], [r["#2 String"] for r in rows], np.array([r["Quality"] == "1" for r in rows])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO / "fixtures" / "mrpc_sample.tsv"))
    parser.add_argument("--metrics", nargs="+", default=DEFAULT_METRICS)
    args = parser.parse_args()
    sources, hypotheses, labels = read_mrpc(args.corpus)
    print(f"{args.corpus}: {len(labels)} pairs, {labels.sum()} paraphrases")
    print("metric | mean P / N | best accuracy (threshold [tied range]) | EER (threshold)")
    variants = [(name, {}) for name in args.metrics]
    if "meteor" in args.metrics:
        variants.insert(args.metrics.index("meteor") + 1, ("meteor", {"tokenizer": "whitespace"}))
    for name, options in variants:
        metric = get_metric(name, **options)
        scores = np.array(metric.score(sources=sources, hypotheses=hypotheses))
        best = best_threshold(scan_thresholds(scores, labels, metric.direction))
        eer, eer_threshold = equal_error_rate(scores, labels, metric.direction)
        label = name + "".join(f" {key}={value}" for key, value in options.items())
        print(
            f"{label} | {scores[labels].mean():.3f} / {scores[~labels].mean():.3f} | {best['accuracy']:.2f} "
            f"({best['threshold']:.3f} [{best['threshold_low']:.3f}, {best['threshold_high']:.3f}]) | "
            f"{eer:.2f} ({eer_threshold:.3f})",
            flush=True,
        )


if __name__ == "__main__":
    main()
