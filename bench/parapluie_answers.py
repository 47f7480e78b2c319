"""What the yes/no answer setting (PARAPLUIE_ANSWER) does to threshold 0 on the demo pairs.

    python bench/parapluie_answers.py [--templates parapluie_direct parapluie_fs_direct] [--model embedded]

For each template and answer setting: the share of pairs called paraphrases at 0 (the one
rule, score >= 0), the accuracy there against the demo labels, the mean score per label and
the best a-posteriori accuracy. With the embedded SmolLM2-135M the model is near chance:
the numbers show what the setting moves, not how good the metric is. Not a test.
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics import get_metric  # noqa: E402
from metrics.base import called_paraphrase  # noqa: E402
from metrics.parapluie import ANSWER_MODES  # noqa: E402
from reports.analysis.classification import best_threshold, scan_thresholds  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo_pairs.jsonl"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", nargs="+", default=["parapluie_direct", "parapluie_fs_direct"])
    parser.add_argument("--model", default=os.environ.get("PARAPLUIE_MODEL") or "embedded")
    args = parser.parse_args()
    rows = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    sources, hypotheses = [r["source"] for r in rows], [r["hypothesis"] for r in rows]
    labels = np.array([r["label"] == 1 for r in rows])
    print(f"{len(rows)} demo pairs, {labels.sum()} paraphrases; model {args.model}")
    print("template | answer | called paraphrase at 0 | accuracy at 0 | mean P / N | best accuracy (threshold)")
    for template in args.templates:
        for answer in ANSWER_MODES:
            metric = get_metric(template, model=args.model, answer=answer)
            scores = np.array(metric.score(sources=sources, hypotheses=hypotheses))
            called = called_paraphrase(scores, metric.natural_threshold, metric.direction)
            best = best_threshold(scan_thresholds(scores, labels, metric.direction))
            print(
                f"{template} | {metric.signature()['answer']} | {called.mean():.0%} ({called.sum()}/{len(rows)}) | "
                f"{(called == labels).mean():.2f} | {scores[labels].mean():.3f} / {scores[~labels].mean():.3f} | "
                f"{best['accuracy']:.2f} ({best['threshold']:.3f})",
                flush=True,
            )


if __name__ == "__main__":
    main()
