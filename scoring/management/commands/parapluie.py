"""Print the ParaPLUIE score of one sentence pair, its verdict at the natural threshold, and the answer setting."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from metrics.backends import BackendUnavailable
from metrics.base import MetricUnavailable, ScoresFailed, called_paraphrase
from scoring import service

TEMPLATES = {"direct": "parapluie_direct", "indirect": "parapluie_indirect", "fs-direct": "parapluie_fs_direct"}


class Command(BaseCommand):
    help = (
        "ParaPLUIE(S, H) = log p(yes)/p(no); a score >= 0 means the model judges H a paraphrase of S. "
        "The yes/no answer tokens (PARAPLUIE_ANSWER) move what 0 means, so they are printed beside the verdict."
    )

    def add_arguments(self, parser):
        parser.add_argument("source")
        parser.add_argument("hypothesis")
        parser.add_argument("--template", choices=list(TEMPLATES), default="direct")
        parser.add_argument(
            "--backend",
            help=f"an LLM backend from PARASOL_LLM_BACKENDS: {', '.join(settings.PARASOL_LLM_BACKENDS)} "
            f"(default: {settings.PARASOL_LLM_BACKEND})",
        )

    def handle(self, *args, source, hypothesis, template, backend=None, **options):
        try:
            scorer = service.scorer_for(TEMPLATES[template], backend=backend)
            value = scorer.score(sources=[source], hypotheses=[hypothesis])[0]
        except (MetricUnavailable, BackendUnavailable, ScoresFailed) as error:
            raise CommandError(str(error)) from None
        threshold = scorer.natural_threshold
        verdict = "paraphrase" if called_paraphrase(value, threshold, scorer.direction) else "not a paraphrase"
        answer = scorer.signature()["answer"]
        self.stdout.write(f"{value:.4f}  ({verdict} at threshold {threshold:g}; answer {answer})")
