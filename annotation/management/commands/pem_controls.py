"""Add PEM's three fixed-score control systems to a criteria campaign (PEM, section 5.1)."""

from django.core.management.base import BaseCommand, CommandError

from annotation.controls import add_pem_controls
from annotation.tasktypes.criteria.tasktype import Criteria
from campaigns.models import Campaign
from campaigns.task_types import task_type_of


class Command(BaseCommand):
    help = (
        "Add PEM's artificial systems to CAMPAIGN, for every source: the source itself (A5 F5 D1 O2), a random "
        "sentence of the same corpus (A1 F5 D5 O1), a unigram-LM sentence (A1 F1 D5 O1). Judges never see them; "
        "the metrics score them (run `score`), and PEM's report joins them to the judges' mean."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's slug")
        parser.add_argument("--seed", type=int, default=0, help="seed of the random and unigram sentences")

    def handle(self, *args, campaign, seed, **options):
        found = Campaign.objects.filter(slug=campaign).first()
        if found is None:
            raise CommandError(f"no campaign with slug {campaign!r}")
        if not isinstance(task_type_of(found), Criteria):
            raise CommandError(f"{campaign} is a {found.task_type!r} campaign: PEM's controls carry PEM's four ratings")
        count = add_pem_controls(found, seed=seed)
        self.stdout.write(
            self.style.SUCCESS(f"Added {count} PEM control pairs to {campaign}; score them with `score`.")
        )
