"""Draw the next wave of an active-choice campaign's pairs: manage.py draw_active_choice CAMPAIGN (the page's Draw)."""

from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign
from reports.active import ActiveChoiceError, draw_active_choice


class Command(BaseCommand):
    help = "Draw the next wave of pairs judges will see in an active-choice campaign (the campaign page's Draw button)."

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
            f"{campaign.slug}: wave {drawn['wave']} of {drawn['waves']}: {drawn['chosen']} of {drawn['pairs']} pairs "
            f"drawn for judging ({drawn['expected']:.1f} expected{held_back}); judges now see these."
        )
