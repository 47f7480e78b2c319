"""python manage.py export_pairs CAMPAIGN --out FILE.csv [--judgments | --spans]"""

from django.core.management.base import BaseCommand, CommandError

from campaigns.exports import FAILED_EXPORT_LINE, csv_chunks, write_atomically
from campaigns.models import Campaign
from campaigns.scores import signature_lines
from reports.exports import JUDGMENT_COLUMNS, judgments_frames, pairs_with_scores_pages, tagging_lines


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
        what = "judgments" if judgments else "pairs"
        self._write(chunks, out, what, target)
        if signatures and out != "-":
            # Metric columns are only comparable under the same signature: publish them beside the CSV.
            self._write([signature_lines(signatures)], f"{out}.signatures.txt", "signatures", target)
        if out != "-":
            self.stdout.write(self.style.SUCCESS(f"Wrote {rows[0]} {what} of campaign {target.slug!r} to {out}."))

    def _write(self, chunks, out, what, campaign):
        """Write to standard output, or to `out` through a temporary file renamed only when complete.

        A failure midway is a CommandError (exit status 1) naming the problem; on standard output,
        whose reader already has the first rows, the text then ends with FAILED_EXPORT_LINE.
        """
        try:
            if out == "-":
                for text in chunks:
                    self.stdout.write(text, ending="")
            else:
                write_atomically(out, chunks)
        except OSError as error:
            raise CommandError(f"Cannot write {out}: {error.strerror}.") from None
        except Exception as error:
            if out == "-":
                self.stdout.write(FAILED_EXPORT_LINE, ending="")
            where = (
                "the text on standard output is incomplete (its last line says so)"
                if out == "-"
                else f"{out} was not written, as it would be incomplete"
            )
            raise CommandError(
                f"The export of the {what} of campaign {campaign.slug!r} failed midway "
                f"({type(error).__name__}: {error}); {where}."
            ) from error

    def _write_taggings(self, campaign, out):
        lines = tagging_lines(campaign)
        self._write((f"{line}\n" for line in lines), out, "taggings", campaign)
        if out != "-":
            self.stdout.write(
                self.style.SUCCESS(f"Wrote {len(lines)} taggings of campaign {campaign.slug!r} to {out}.")
            )
