"""Time the report on synthetic data: 10,000 pairs x 9 metrics x 3 judgments (target: 3 s).

    .venv/bin/python bench/report.py [--pairs 10000] [--db]

Not a test. Prints the seconds of the pure analysis (`build_report`) and, with --db, of
loading the same data from a fresh SQLite database through `reports.frames`.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.tasktypes.similarity.scale import ANSWER_KEY, ANSWERS, VOTE  # noqa: E402
from annotation.votes import ANSWER_COLUMN, with_votes  # noqa: E402
from metrics.registry import direction_of, metric_names, natural_threshold_of  # noqa: E402
from reports.analysis import build_report  # noqa: E402

TARGET_SECONDS = 3.0
CORPORA = ["MRPC", "PAWS", "MCPG", "LLM", "HC"]
# Each metric of the registry, with its direction (stated there, read without importing the metric).
METRICS = {name: direction_of(name) for name in metric_names()}

WORDS = "the a cat dog sat on mat quickly slowly house river tree small big old new red blue runs walks".split()


def synthetic(n_pairs=10_000, n_judgments=3, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(n_pairs) < 0.6
    sources = [" ".join(rng.choice(WORDS, size=rng.integers(6, 16))) for _ in range(n_pairs)]
    hypotheses = [
        " ".join(w if rng.random() < (0.8 if t else 0.5) else rng.choice(WORDS) for w in s.split())
        for s, t in zip(sources, truth)
    ]
    pairs = pd.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(n_pairs)],
            "corpus": rng.choice(CORPORA, size=n_pairs),
            "source": sources,
            "hypothesis": hypotheses,
            "gold_label": pd.array(truth.astype(int), dtype="Int64"),
            "generator": rng.choice(["mistral", "llama2", None], size=n_pairs),
            "template": rng.choice(["plain", "vulgar"], size=n_pairs),
        }
    )
    for i, (metric, direction) in enumerate(METRICS.items()):
        signal = truth * (0.3 + 0.05 * i) + rng.normal(0, 0.3, n_pairs)
        log_odds = natural_threshold_of(metric) is not None  # spread wide around its threshold, as ParaPLUIE's are
        pairs[metric] = (-signal if direction == "lower" else signal) + (20 * signal if log_odds else 0)
    judges = [f"judge-{j:05d}" for j in range(n_pairs * n_judgments // 50)]
    levels = dict(zip(judges, rng.choice(["poor", "good", "advanced", "native"], size=len(judges))))
    pair_index = np.repeat(np.arange(n_pairs), n_judgments)
    judge_of = rng.choice(judges, size=len(pair_index))
    noisy = truth[pair_index] ^ (rng.random(len(pair_index)) < 0.2)
    answer = np.where(noisy, rng.choice([2, 3], size=len(pair_index)), rng.choice([0, 1], size=len(pair_index)))
    answer[rng.random(len(pair_index)) < 0.05] = 4
    judgments = pd.DataFrame(
        {
            "pair_id": pairs["pair_id"].to_numpy()[pair_index],
            "judge": judge_of,
            "english_level": [levels[j] for j in judge_of],
            ANSWER_COLUMN: np.asarray(ANSWERS)[answer],
        }
    )
    return pairs, with_votes(judgments, VOTE)


def time_analysis(pairs, judgments):
    start = time.perf_counter()
    report = build_report(pairs, judgments, METRICS, label_source="human")
    return time.perf_counter() - start, report


def time_database(pairs, judgments):
    """Store the synthetic data in a fresh SQLite database and time `reports.frames.load_frames`."""
    import os
    import secrets
    import tempfile

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
    # Production settings (DEBUG is opt-in) need a strong key; a throwaway database needs no fixed one.
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["SQLITE_PATH"] = str(Path(tempfile.mkdtemp()) / "bench.sqlite3")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone

    call_command("migrate", verbosity=0)
    from annotation.models import Assignment, Judge, Judgment
    from campaigns.models import Campaign, Pair, Score
    from reports.frames import load_frames

    campaign = Campaign.objects.create(slug="bench", name="Bench")
    stored = Pair.objects.bulk_create(
        Pair.build(
            campaign,
            external_id=row.pair_id,
            corpus=row.corpus,
            source=row.source,
            hypothesis=row.hypothesis,
            gold_label=int(row.gold_label),
            metadata={
                key: value
                for key, value in (("generator", row.generator), ("template", row.template))
                if isinstance(value, str)
            },
        )
        for row in pairs.itertuples()
    )
    pk_of = {pair.external_id: pair.pk for pair in stored}
    Score.objects.bulk_create(
        (
            Score(pair_id=pk_of[pid], metric=m, signature=f"metric:{m}|version:1", value=float(v))
            for m in METRICS
            for pid, v in zip(pairs["pair_id"], pairs[m])
        ),
        batch_size=5000,
    )
    now = timezone.now()
    judges = {
        name: Judge.objects.create(campaign=campaign, consented_at=now, english_level=level)
        for name, level in judgments.drop_duplicates("judge")[["judge", "english_level"]].itertuples(index=False)
    }
    seen, assignments = set(), []
    for position, row in enumerate(judgments.itertuples()):
        key = (row.judge, row.pair_id)
        if key in seen:
            continue
        seen.add(key)
        assignments.append(
            Assignment(judge=judges[row.judge], pair_id=pk_of[row.pair_id], position=position, top="source")
        )
    Assignment.objects.bulk_create(assignments, batch_size=5000)
    answer_of = dict(zip(zip(judgments["judge"], judgments["pair_id"]), judgments[ANSWER_COLUMN]))
    reverse_pk = {pk: pid for pid, pk in pk_of.items()}
    name_of = {judge.pk: name for name, judge in judges.items()}
    Judgment.objects.bulk_create(
        (
            Judgment(
                assignment=a,
                judge_id=a.judge_id,
                pair_id=a.pair_id,
                values={ANSWER_KEY: answer_of[(name_of[a.judge_id], reverse_pk[a.pair_id])]},
            )
            for a in Assignment.objects.filter(judge__campaign=campaign)
        ),
        batch_size=5000,
    )
    start = time.perf_counter()
    frames = load_frames([campaign])
    return time.perf_counter() - start, frames


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--db", action="store_true", help="also time loading from SQLite")
    args = parser.parse_args()
    pairs, judgments = synthetic(args.pairs)
    print(f"{len(pairs):,} pairs x {len(METRICS)} metrics, {len(judgments):,} judgments")
    runs = [time_analysis(pairs, judgments)[0] for _ in range(3)]
    seconds = min(runs)
    print(
        f"analysis, 3 runs: {', '.join(f'{s:.2f}' for s in runs)} s; best {seconds:.2f} s "
        f"({seconds / TARGET_SECONDS:.2f} x the {TARGET_SECONDS:.0f} s target)"
    )
    if args.db:
        load_seconds, _ = time_database(pairs, judgments)
        total = load_seconds + seconds
        print(
            f"loading from SQLite: {load_seconds:.2f} s; loading + analysis: {total:.2f} s "
            f"({total / TARGET_SECONDS:.2f} x the target)"
        )


if __name__ == "__main__":
    main()
