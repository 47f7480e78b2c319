"""Train ParaTag's detector on a campaign's span taggings and store it as the next version of metric `paratag`."""

from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign
from metrics.base import MetricUnavailable
from metrics.paratag_training import DEFAULT_LEARNING_RATE, PAPER_LEARNING_RATES, TooFewPairs
from parasol.progress import ProgressBar
from reports.detector import card_text, train_campaign_detector


def _positive(value):
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Train a span detector (ParaTag, section 5.1) on CAMPAIGN's aggregated taggings, split train / validation / "
        "test by source, evaluate it on the test pairs and store it in the campaign's own folder campaign-<id>/ under "
        "var/detectors (or PARATAG_DETECTORS_DIR); the campaign's paratag scores then use it, no other campaign's."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's slug")
        parser.add_argument("--encoder", help="a local Hugging Face encoder directory (default: the packaged MiniLM)")
        parser.add_argument("--epochs", type=_positive, default=10, help="most epochs (early stopping on F1)")
        parser.add_argument("--device", default="cpu", help="torch device: cpu (default), cuda, cuda:1...")
        parser.add_argument("--seed", type=int, default=13, help="seed of the split by source and of training")
        parser.add_argument("--batch-size", type=_positive, default=16)
        parser.add_argument("--lr", type=float, default=DEFAULT_LEARNING_RATE, help="AdamW's learning rate")
        parser.add_argument(
            "--lr-grid", action="store_true", help=f"try the paper's rates {list(PAPER_LEARNING_RATES)}, keep the best"
        )

    def handle(self, *args, campaign, encoder, epochs, device, seed, batch_size, lr, lr_grid, **options):
        found = Campaign.objects.live().filter(slug=campaign).first()
        if found is None:
            raise CommandError(f"no campaign with slug {campaign!r}")
        if device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                raise CommandError(f"--device {device}: no CUDA device here (torch sees none)")
        bar = None

        def progress(done, total):
            nonlocal bar
            bar = bar or ProgressBar(total, "training", self.stderr)
            bar.set(done)

        def on_stage(text):
            nonlocal bar
            if bar:  # the bar's line ends before the next stage is written
                bar.close()
                bar = None
            self.stderr.write(f"{text}\n")

        try:
            path, manifest = train_campaign_detector(
                found,
                encoder=encoder,
                epochs=epochs,
                device=device,
                seed=seed,
                batch_size=batch_size,
                learning_rates=PAPER_LEARNING_RATES if lr_grid else (lr,),
                progress=progress,
                on_stage=on_stage,
            )
        except (TooFewPairs, MetricUnavailable) as error:
            raise CommandError(str(error)) from None
        finally:
            if bar:
                bar.close()
        self.stdout.write(card_text(manifest))
        self.stdout.write(self.style.SUCCESS(f"Stored detector {path.name} in {path}."))
