"""Creating a campaign from the command line (`import_pairs --create`, `generate --create`): one owner, one name."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.core.validators import validate_slug

from .models import Campaign


def add_creation_arguments(parser):
    parser.add_argument(
        "--owner",
        metavar="USERNAME",
        help="With --create: the researcher who owns the campaign and sees it on their pages "
        "(without it, only superusers see the campaign).",
    )
    parser.add_argument("--name", help="With --create: the campaign's name, shown to judges (default: the slug).")


def create_campaign(slug, *, owner=None, name=None, task_type=None):
    """A new open campaign with its training trial; every argument checked first, a clear message if one is wrong."""
    try:
        validate_slug(slug)
    except ValidationError:
        raise CommandError(f"{slug!r} is not a valid slug (letters, digits, hyphens, underscores).") from None
    campaign = Campaign(slug=slug, name=(name or slug).strip(), created_by=researcher(owner) if owner else None)
    if task_type:
        campaign.task_type = task_type
    max_name = Campaign._meta.get_field("name").max_length
    if not campaign.name or len(campaign.name) > max_name:
        raise CommandError(f"--name must be 1 to {max_name} characters.")
    campaign.save()
    try:
        campaign.ensure_training_pairs()
    except OSError as error:
        raise CommandError(f"Cannot read the default training pairs: {error}.") from None
    return campaign


def researcher(username):
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(
            f"--owner: no user named {username!r}; create one with `python manage.py createsuperuser` "
            "or in the admin (a staff account)."
        )
    if not user.is_staff:
        raise CommandError(f"--owner: {username!r} is not a researcher (a staff account): they could not open it.")
    return user


def refuse_creation_options(slug, *, owner=None, name=None):
    """--owner and --name only shape a new campaign: say so rather than ignore them."""
    given = [option for option, value in (("--owner", owner), ("--name", name)) if value]
    if given:
        raise CommandError(
            f"Campaign {slug!r} already exists; {' and '.join(given)} apply to new ones (change it on its Edit page)."
        )


def owned_by(campaign):
    """Who will see a campaign made on the command line, for the command's report."""
    if campaign.created_by is None:
        return "no owner: only superusers see it (pass --owner USERNAME to give it one)"
    return f"owned by {campaign.created_by.username!r}"
