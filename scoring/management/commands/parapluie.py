"""Print the ParaPLUIE score of one sentence pair."""

from django.core.management.base import BaseCommand, CommandError

from scoring import service
from scoring.metrics.base import MetricUnavailable

TEMPLATES = {"direct": "parapluie_direct", "indirect": "parapluie_indirect", "fs-direct": "parapluie_fs_direct"}


class Command(BaseCommand):
    help = "ParaPLUIE(S, H) = log p(yes)/p(no); positive means the model judges H a paraphrase of S."

    def add_arguments(self, parser):
        parser.add_argument("source")
        parser.add_argument("hypothesis")
        parser.add_argument("--template", choices=list(TEMPLATES), default="direct")

    def handle(self, *args, source, hypothesis, template, **options):
        try:
            value = service.scorer(TEMPLATES[template]).score(sources=[source], hypotheses=[hypothesis])[0]
        except MetricUnavailable as error:
            raise CommandError(str(error)) from None
        verdict = "paraphrase" if value > 0 else "not a paraphrase"
        self.stdout.write(f"{value:.4f}  ({verdict})")
