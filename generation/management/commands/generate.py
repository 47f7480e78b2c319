"""Paraphrase a file of sources with a chat LLM and import the accepted outputs as pairs."""

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from campaigns.command_line import add_creation_arguments, create_campaign, owned_by, refuse_creation_options
from campaigns.models import Campaign
from generation.errors import GenerationError
from generation.llm import model_names
from generation.models import SELECTION_METRIC, GenerationRun, create_run, parse_sources
from generation.selection import why_not_yet
from generation.tasks import queue_run
from generation.templates import BUILTIN_TEMPLATES
from metrics.backends import BackendUnavailable
from metrics.loading import EMBEDDED
from metrics.registry import metric_names
from parasol.progress import ProgressBar


class Command(BaseCommand):
    help = (
        "Generate paraphrases of SOURCES_FILE (one sentence per line, or a CSV with a source column) "
        "for CAMPAIGN with one or more templates, in the `gpu` workers or with --inline in this process."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's slug")
        parser.add_argument("sources_file", help="one source per line, or a CSV with a 'source' column")
        parser.add_argument(
            "--template",
            action="append",
            required=True,
            metavar="NAME",
            help=f"{', '.join(BUILTIN_TEMPLATES)} or a campaign template; repeat for several",
        )
        parser.add_argument("--create", action="store_true", help="create the campaign if it does not exist")
        add_creation_arguments(parser)
        parser.add_argument(
            "--model",
            default=EMBEDDED,
            help=f"one of: {', '.join(model_names())} ('{EMBEDDED}' is SmolLM2; GENERATION_MODELS adds more)",
        )
        parser.add_argument("--n", type=int, default=1, help="candidates per source (more than 1 needs --sampling)")
        parser.add_argument("--sampling", action="store_true", help="sample instead of greedy decoding")
        parser.add_argument("--temperature", type=float, default=0.7)
        parser.add_argument("--top-p", type=float, default=0.9)
        parser.add_argument("--max-new-tokens", type=int, default=64)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--corpus", default="LLM", help="corpus name of the pairs created")
        parser.add_argument(
            "--bleu-range",
            nargs=2,
            type=float,
            metavar=("LOW", "HIGH"),
            help="keep outputs whose BLEU with the source lies strictly between LOW and HIGH (ParaTag: 5 20)",
        )
        parser.add_argument(
            "--selection",
            choices=[choice.value for choice in GenerationRun.Selection],
            help="which candidates go to judges (default: top when --n > 1, else all)",
        )
        parser.add_argument(
            "--selection-metric",
            choices=metric_names(),
            metavar="METRIC",
            help=f"the metric ranking the candidates ({SELECTION_METRIC}): {', '.join(metric_names())}",
        )
        parser.add_argument("--selection-threshold", type=float, help="with --selection threshold")
        parser.add_argument("--max-bleu", type=float, help="never select a candidate with BLEU above this (0-100)")
        parser.add_argument("--unselected-share", type=float, help="share of unselected candidates judged (0.2)")
        parser.add_argument(
            "--no-pattern-filter",
            action="store_true",
            help="keep ParaTag-format answers off their Paraphrase line too (ParaTag's section 4.1 filter is on)",
        )
        parser.add_argument("--inline", action="store_true", help="generate in this process instead of the workers")
        parser.add_argument("--timeout", type=float, default=24 * 3600, help="seconds to wait for the workers")

    def handle(self, *args, **options):
        campaign = self._campaign(options["campaign"], options["create"], options["owner"], options["name"])
        path = Path(options["sources_file"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        decoding = GenerationRun.Decoding.SAMPLING if options["sampling"] else GenerationRun.Decoding.GREEDY
        try:
            sources = parse_sources(path.read_bytes(), path.name)
            run = create_run(
                campaign,
                sources=sources,
                templates=options["template"],
                model=options["model"],
                decoding=decoding,
                temperature=options["temperature"],
                top_p=options["top_p"],
                max_new_tokens=options["max_new_tokens"],
                seed=options["seed"],
                candidates=options["n"],
                corpus=options["corpus"],
                bleu_low=options["bleu_range"][0] if options["bleu_range"] else None,
                bleu_high=options["bleu_range"][1] if options["bleu_range"] else None,
                pattern_filter=not options["no_pattern_filter"],
                **self._selection(options),
            )
        except (GenerationError, UnicodeDecodeError) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Generation run {run.pk}: {len(sources)} sources × {len(run.templates)} template(s).")
        bar = ProgressBar(run.progress()["expected"], f"run {run.pk}", stream=self.stderr)
        if options["inline"]:
            try:
                run.run_inline(progress=bar.update)
            except BackendUnavailable as error:
                bar.close()
                raise CommandError(
                    f"{error}; run {run.pk} keeps what it made and stays queued: resume it once the server answers"
                ) from None
        else:
            self._wait_for_workers(run, bar, options["timeout"])
        bar.close()
        self._report(run)

    def _selection(self, options):
        names = {
            "selection": "selection",
            "selection_metric": "selection_metric",
            "selection_threshold": "selection_threshold",
            "max_bleu": "selection_max_bleu",
            "unselected_share": "unselected_share",
        }
        return {field: options[option] for option, field in names.items() if options.get(option) is not None}

    def _campaign(self, slug, create, owner, name):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None and not create:
            raise CommandError(f"no campaign with slug {slug!r} (use --create to make it)")
        if campaign is None:
            campaign = create_campaign(slug, owner=owner, name=name)
            self.stdout.write(f"Created campaign {slug!r} ({campaign.name!r}), {owned_by(campaign)}.")
        else:
            refuse_creation_options(slug, owner=owner, name=name)
        return campaign

    def _wait_for_workers(self, run, bar, timeout):
        try:
            queue_run(run, strict=True)  # outside a transaction: sent at once
        except Exception as error:
            raise CommandError(
                f"could not reach the Celery broker (REDIS_URL): {error}; run {run.pk} stays queued, "
                "resume it later or use --inline"
            ) from None
        deadline = time.monotonic() + timeout
        while run.is_active:
            if time.monotonic() > deadline:
                raise CommandError(f"timed out waiting for run {run.pk}; it goes on in the workers")
            time.sleep(0.5)
            run.refresh_from_db()
            bar.set(run.progress()["done"])

    def _report(self, run):
        run.refresh_from_db()
        progress = run.progress()
        reasons = "; ".join(f"{reason} {n}" for reason, n in progress["reject_reasons"].items())
        summary = (
            f"Run {run.pk} {run.status}: {progress['done']} outputs, {progress['accepted']} accepted "
            f"({progress['pairs']} pairs in {run.campaign.slug}), {progress['rejected']} rejected"
            + (f" ({reasons})" if reasons else "")
            + "."
        )
        if run.status == GenerationRun.Status.FAILED:
            raise CommandError(f"{summary} Error: {run.error}")
        self.stdout.write(self.style.SUCCESS(summary))
        if run.selects:
            waiting = why_not_yet(run)
            self.stdout.write(
                f"Selection ({run.selection} by {run.selection_metric}): "
                + (f"waits: {waiting}; then: manage.py select_candidates {run.pk}." if waiting else "ready.")
            )
