"""python manage.py export_pairs CAMPAIGN --out FILE.csv [--judgments | --spans]"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from campaigns.exports import csv_chunks
from campaigns.models import Campaign
from reports.exports import JUDGMENT_COLUMNS, judgments_frames, pairs_with_scores_pages, tagging_lines
from scoring.service import signature_lines


class Command(BaseCommand):
    help = "Write a campaign's pairs with judgment counts (or, with --judgments, every judgment) as CSV."

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="The campaign's slug.")
        parser.add_argument("--out", required=True, help="The CSV file to write; - for standard output.")
        kind = parser.add_mutually_exclusive_group()
        kind.add_argument("--judgments", action="store_true", help="Write one row per judgment instead.")
        kind.add_argument(
            "--spans",
            action="store_true",
            help="Write the span taggings as JSON lines (tokens and 0/1 tags per judge).",
        )

    def handle(self, *args, campaign, out, judgments, spans, **options):
        target = Campaign.objects.filter(slug=campaign).first()
        if target is None:
            raise CommandError(f"No campaign with slug {campaign!r}.")
        if spans:
            self._write_taggings(target, out)
            return
        if judgments:
            frames, columns, signatures = judgments_frames(target), JUDGMENT_COLUMNS, {}
        else:
            frames, columns, signatures = pairs_with_scores_pages(target)
        rows = [0]

        def counted(frames):
            for frame in frames:
                rows[0] += len(frame)
                yield frame

        # Written chunk by chunk: memory stays flat however many rows the campaign has.
        chunks = csv_chunks(counted(frames), columns)
        if out == "-":
            for text in chunks:
                self.stdout.write(text, ending="")
            return
        try:
            with open(out, "w", encoding="utf-8", newline="") as handle:
                handle.writelines(chunks)
            if signatures:
                # Metric columns are only comparable under the same signature: publish them beside the CSV.
                Path(f"{out}.signatures.txt").write_text(signature_lines(signatures))
        except OSError as error:
            raise CommandError(f"Cannot write {out}: {error.strerror}.") from None
        what = "judgments" if judgments else "pairs"
        self.stdout.write(self.style.SUCCESS(f"Wrote {rows[0]} {what} of campaign {target.slug!r} to {out}."))

    def _write_taggings(self, campaign, out):
        lines = tagging_lines(campaign)
        text = "".join(f"{line}\n" for line in lines)
        if out == "-":
            self.stdout.write(text, ending="")
            return
        try:
            Path(out).write_text(text, encoding="utf-8")
        except OSError as error:
            raise CommandError(f"Cannot write {out}: {error.strerror}.") from None
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(lines)} taggings of campaign {campaign.slug!r} to {out}."))
