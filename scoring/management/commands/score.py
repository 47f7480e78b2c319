"""Fill in missing metric scores for a campaign, in the workers or in this process."""

import time

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign, Score
from metrics.backends import BackendUnavailable
from metrics.base import MetricUnavailable
from metrics.registry import metric_names
from parasol.progress import ProgressBar
from scoring import service, tasks


class Command(BaseCommand):
    help = "Score every pair of CAMPAIGN that lacks a score, with all enabled metrics or --metrics."
    # The system checks import every URL module (reports, figures): seconds of start-up a batch
    # command does not need; `manage.py check`, runserver and migrate still run them.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's slug")
        parser.add_argument(
            "--metrics",
            nargs="+",
            metavar="METRIC",
            help=f"metric names separated by spaces (default: the enabled ones): {', '.join(metric_names())}",
        )
        parser.add_argument("--wait", action="store_true", help="block until the scores are stored")
        parser.add_argument("--inline", action="store_true", help="score in this process instead of the workers")
        parser.add_argument("--timeout", type=float, default=3600, help="seconds --wait waits at most")
        parser.add_argument(
            "--retry-failed",
            action="store_true",
            help="try again the pairs the metrics gave up on (PARASOL_SCORING_PAIR_TRIES failures each)",
        )
        parser.add_argument(
            "--llm-backend",
            action="append",
            default=[],
            metavar="METRIC=BACKEND",
            help="make BACKEND (a name from PARASOL_LLM_BACKENDS: "
            f"{', '.join(settings.PARASOL_LLM_BACKENDS)}) the campaign's backend for LLM metric METRIC; "
            "kept for later scoring; repeat for several metrics",
        )

    def handle(self, *args, campaign, metrics, wait, inline, timeout, llm_backend=(), retry_failed=False, **options):
        campaign = Campaign.objects.filter(slug=campaign).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options.get('campaign') or 'given'!r}")
        if llm_backend:
            self._choose_backends(campaign, llm_backend)
        metrics = metrics or service.enabled_metrics()
        try:
            service.check_metric_names(metrics)
            if retry_failed:
                forgotten = sum(service.forget_failures(metric, campaign) for metric in metrics)
                self.stderr.write(f"{forgotten} failed pair(s) will be tried again.")
            if inline:
                self._score_inline(campaign, metrics)
            else:
                self._score_in_workers(campaign, metrics, wait, timeout)
        except (MetricUnavailable, BackendUnavailable, ValueError) as error:
            raise CommandError(str(error)) from None

    def _choose_backends(self, campaign, items):
        choices = {}
        for item in items:
            metric, equals, name = item.partition("=")
            if not (equals and metric and name):
                raise CommandError(f"--llm-backend takes METRIC=BACKEND, got {item!r}")
            choices[metric.strip()] = name.strip()
        try:
            campaign.choose_llm_backends(choices)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None

    def _score_inline(self, campaign, metrics):
        for metric in metrics:
            signature = service.scorer_for(metric, campaign).signature_string()
            bar = ProgressBar(service.pairs_missing(metric, signature, campaign=campaign).count(), metric, self.stderr)
            start = time.perf_counter()
            done = service.score_campaign_inline(campaign, metric, progress=bar.update)
            seconds = time.perf_counter() - start
            bar.close()
            self.stdout.write(f"{metric}: {done} pairs scored and stored in {seconds:.2f} s")
        self.stdout.write(self.style.SUCCESS(f"Scored {campaign.slug} with {', '.join(metrics)}."))

    def _score_in_workers(self, campaign, metrics, wait, timeout):
        try:
            results = tasks.queue_sweep(campaign.pk, metrics)
        except Exception as error:
            raise CommandError(f"could not reach the Celery broker (REDIS_URL): {error}") from None
        self.stdout.write(f"Queued scoring of {campaign.slug} for {', '.join(metrics)}.")
        if not wait:
            return
        deadline = time.monotonic() + timeout
        total = campaign.real_pairs.count()
        for metric, result in zip(metrics, results):
            signature = result.get(timeout=max(1, deadline - time.monotonic()))
            bar = ProgressBar(total, metric, stream=self.stderr)
            while True:
                done = Score.objects.filter(pair__campaign=campaign, metric=metric, signature=signature).count()
                bar.set(done)
                if done >= total:
                    break
                if time.monotonic() > deadline:
                    bar.close()
                    raise CommandError(f"timed out waiting for {metric}: {done}/{total} pairs scored")
                time.sleep(0.5)
            bar.close()
        self.stdout.write(self.style.SUCCESS("All scores stored."))
