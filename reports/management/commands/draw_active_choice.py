"""Draw which pairs of an active-choice campaign judges will see: manage.py draw_active_choice CAMPAIGN."""

from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign
from reports.active import ActiveChoiceError, draw_active_choice


class Command(BaseCommand):
    help = "Draw the pairs judges will see in an active-choice campaign (once its predictor has scored every pair)."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's slug")
        parser.add_argument("--seed", type=int, default=None, help="seed of the draw (default: fresh randomness)")

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["campaign"], deleted_at__isnull=True).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']}")
        try:
            drawn = draw_active_choice(campaign, seed=options["seed"])
        except ActiveChoiceError as error:
            raise CommandError(str(error)) from None
        held_back = f"; {drawn['held_back']} held back by a generation run's selection" if drawn["held_back"] else ""
        self.stdout.write(
            f"{campaign.slug}: {drawn['chosen']} of {drawn['pairs']} pairs drawn for judging "
            f"({drawn['expected']:.1f} expected{held_back}); judges now see only these."
        )
