"""python manage.py import_pairs CAMPAIGN FILE [--format ...] [--create --owner USERNAME --name NAME] [--corpus NAME]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from campaigns.command_line import add_creation_arguments, create_campaign, owned_by, refuse_creation_options
from campaigns.importers import FORMATS, CorpusImportError, import_pairs
from campaigns.models import Campaign
from campaigns.task_types import default_task_type, task_type_names
from parasol.progress import ProgressBar


class Command(BaseCommand):
    help = "Import sentence pairs (CSV, TSV, JSONL, MRPC or PAWS) into a campaign; a bad file imports nothing."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="The campaign's slug.")
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", choices=FORMATS, default="auto")
        parser.add_argument("--create", action="store_true", help="Create the campaign (open) if it does not exist.")
        add_creation_arguments(parser)
        parser.add_argument("--corpus", default="", help="Corpus name for rows that do not name one.")
        parser.add_argument(
            "--task",
            choices=task_type_names(),
            help=f"With --create: the task type judges answer (default: {default_task_type()}).",
        )
        parser.add_argument(
            "--bleu-range",
            nargs=2,
            type=float,
            metavar=("LOW", "HIGH"),
            help="Import only pairs whose BLEU (0-100) lies strictly between LOW and HIGH (ParaTag: 5 20).",
        )

    def handle(self, *args, campaign, file, format, create, corpus, task=None, bleu_range=None, **options):
        creation = {"owner": options.get("owner"), "name": options.get("name"), "task_type": task}
        # The file is streamed: rows are validated and inserted chunk by chunk in one transaction.
        with open_upload(file) as handle:
            bar = ProgressBar(handle.seek(0, 2), "reading", stream=self.stderr, unit="MiB")
            handle.seek(0)
            try:
                with transaction.atomic():
                    target, created = get_campaign(campaign, create=create, **creation)
                    result = import_pairs(
                        target,
                        handle,
                        format=format,
                        filename=file.name,
                        corpus=corpus,
                        progress=bar.set,
                        bleu_range=bleu_range,
                    )
            except CorpusImportError as error:
                raise CommandError(f"{file}: {error}. Nothing was imported.") from None
            finally:
                bar.close()
        if created:
            self.stdout.write(f"Created campaign {target.slug!r} ({target.name!r}), {owned_by(target)}.")
        for rejection in result.rejected:
            self.stdout.write(f"Rejected {rejection}.")
        corpora = ", ".join(name or "(none)" for name in result.corpora)
        self.stdout.write(
            self.style.SUCCESS(f"Imported {result.count} pairs into campaign {target.slug!r} (corpus: {corpora}).")
        )


def open_upload(path):
    try:
        return open(path, "rb")
    except OSError as error:
        raise CommandError(f"Cannot read {path}: {error.strerror}.") from None


def get_campaign(slug, *, create, owner=None, name=None, task_type=None):
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is not None:
        if task_type and task_type != campaign.task_type:
            raise CommandError(
                f"Campaign {slug!r} already exists with task type {campaign.task_type!r}; --task applies to new ones."
            )
        refuse_creation_options(slug, owner=owner, name=name)
        return campaign, False
    if not create:
        raise CommandError(f"No campaign with slug {slug!r}; pass --create to create it.")
    return create_campaign(slug, owner=owner, name=name, task_type=task_type), True
