"""Create the demo campaign and a researcher account (idempotent)."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from campaigns.importers import import_pairs
from campaigns.models import Campaign

DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo_pairs.jsonl"
DEMO_USERNAME = "researcher"
DEMO_PASSWORD = "parasol-demo"


class Command(BaseCommand):
    help = "Load the demo campaign (60 pairs, default training trial) and the demo researcher login."

    def handle(self, *args, **options):
        user, created = get_user_model().objects.get_or_create(
            username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        campaign, created = Campaign.objects.get_or_create(
            slug="demo",
            defaults={
                "name": "Parasol demo",
                "description": "Sixty sentence pairs written for the demo, paraphrases and near misses mixed.",
                "created_by": user,
            },
        )
        if created:
            import_pairs(campaign, DEMO_FILE.read_bytes(), format="jsonl", filename=DEMO_FILE.name)
        campaign.ensure_training_pairs()
        self.stdout.write(f"Demo campaign '{campaign.slug}' has {campaign.real_pairs.count()} pairs.")
