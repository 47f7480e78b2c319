"""Create the demo campaign and a researcher account (idempotent).

The account has a published password, so it exists only in development
(DEBUG on) unless asked for explicitly with a password of one's own; it is a
plain researcher (staff), never a superuser.
"""

import os
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from campaigns.importers import import_pairs
from campaigns.models import Campaign

DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo_pairs.jsonl"
DEMO_USERNAME = "researcher"
DEMO_PASSWORD = "parasol-demo"


class Command(BaseCommand):
    help = "Load the demo campaign (60 pairs, default training trial) and the demo researcher login."

    def add_arguments(self, parser):
        parser.add_argument(
            "--allow-production",
            action="store_true",
            help="Load the demo with DEBUG off; the account then takes its password from PARASOL_DEMO_PASSWORD.",
        )

    def handle(self, *args, allow_production=False, **options):
        password = self._password(allow_production)
        user, created = get_user_model().objects.get_or_create(
            username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": False}
        )
        if created:
            user.set_password(password)
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

    def _password(self, allow_production):
        if settings.DEBUG:
            return DEMO_PASSWORD
        if not allow_production:
            raise CommandError(
                f"refusing to create the demo account '{DEMO_USERNAME}' (published password) with DEBUG off; "
                "set DJANGO_DEBUG=true for a local demo, or pass --allow-production with PARASOL_DEMO_PASSWORD set"
            )
        password = os.environ.get("PARASOL_DEMO_PASSWORD", "")
        if password.strip().casefold() == DEMO_PASSWORD:
            # It passes Django's validators, but it is printed in the README for anyone to try.
            raise CommandError(
                "PARASOL_DEMO_PASSWORD is not acceptable: it is the demo's published password; choose your own"
            )
        try:
            validate_password(password, get_user_model()(username=DEMO_USERNAME))
        except ValidationError as error:
            raise CommandError(f"PARASOL_DEMO_PASSWORD is not acceptable: {' '.join(error.messages)}") from None
        return password
