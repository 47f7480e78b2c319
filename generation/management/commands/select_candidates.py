"""Run a generation run's selection stage now: manage.py select_candidates RUN."""

from django.core.management.base import BaseCommand, CommandError

from generation.models import GenerationRun
from generation.selection import select_candidates, stage_progress


class Command(BaseCommand):
    help = "Select a generation run's candidates by its metric's stored scores (the workers also do it on their own)."

    def add_arguments(self, parser):
        parser.add_argument("run", type=int, help="the generation run's id")

    def handle(self, *args, **options):
        run = GenerationRun.objects.filter(pk=options["run"]).first()
        if run is None:
            raise CommandError(f"no generation run {options['run']}")
        if not run.selects:
            raise CommandError(f"run {run.pk} keeps every candidate: there is nothing to select")
        reason = select_candidates(run)
        if reason:
            raise CommandError(f"the selection cannot run yet: {reason}")
        stages = stage_progress(run)
        self.stdout.write(
            f"Run {run.pk}: {stages['selected']} of {stages['candidates']} candidates selected by "
            f"{run.selection_metric}; {stages['sent']} sent to judges."
        )
