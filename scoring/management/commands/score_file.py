"""Score a corpus file offline: every pair, every chosen metric, written as CSV."""

from pathlib import Path

import pandas as pd
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from campaigns.exports import write_csv
from campaigns.importers import FORMATS, CorpusImportError, parse_corpus
from campaigns.scores import signature_lines
from metrics.base import MetricUnavailable
from metrics.registry import metric_names
from parasol.progress import ProgressBar
from scoring import service


class Command(BaseCommand):
    help = "Read IN (CSV, TSV, JSONL, MRPC or PAWS), score each pair, write OUT.csv with one column per metric."

    def add_arguments(self, parser):
        parser.add_argument("input")
        parser.add_argument("--out", required=True)
        parser.add_argument("--format", choices=FORMATS, default="auto")
        parser.add_argument(
            "--metrics",
            nargs="+",
            metavar="METRIC",
            help=f"metric names separated by spaces (default: the enabled ones): {', '.join(metric_names())}",
        )
        parser.add_argument(
            "--backend",
            help=f"the LLM metrics' backend, from PARASOL_LLM_BACKENDS: {', '.join(settings.PARASOL_LLM_BACKENDS)}",
        )

    def handle(self, *args, input, out, format, metrics, backend=None, **options):
        metrics = metrics or service.enabled_metrics()
        path = Path(input)
        if not path.is_file():
            raise CommandError(f"no such file: {input}")
        try:
            service.check_metric_names(metrics)
            rows = parse_corpus(path.read_bytes(), format=format, filename=path.name)
            frame = pd.DataFrame(
                {
                    "id": [row.external_id for row in rows],
                    "corpus": [row.corpus for row in rows],
                    "source": [row.source for row in rows],
                    "hypothesis": [row.hypothesis for row in rows],
                    "gold_label": pd.array([row.gold_label for row in rows], dtype="Int64"),
                }
            )
            signatures = {}
            for metric in metrics:
                frame[metric], signatures[metric] = self._score(metric, frame, backend)
        except (CorpusImportError, ValueError, MetricUnavailable) as error:
            raise CommandError(str(error)) from None
        write_csv(frame, out)
        Path(f"{out}.signatures.txt").write_text(signature_lines(signatures))
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(frame)} scored pairs to {out} (signatures beside it)."))

    def _score(self, metric, frame, backend):
        scorer = service.scorer_for(metric, backend=backend)
        bar = ProgressBar(len(frame), metric, stream=self.stderr)
        values = []
        for batch in service.batches(range(len(frame)), settings.PARASOL_SCORING_BATCH_SIZE):
            values += scorer.score(
                sources=frame["source"].iloc[batch].tolist(), hypotheses=frame["hypothesis"].iloc[batch].tolist()
            )
            bar.update(len(batch))
        bar.close()
        return values, scorer.signature_string()
