"""One round of ParaTag's collection loop (section 4.3): manage.py paratag_round CAMPAIGN SOURCES."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from campaigns.models import Campaign
from generation.errors import GenerationError
from generation.llm import model_names
from generation.models import parse_sources
from metrics.base import MetricUnavailable
from metrics.paratag_training import TooFewPairs
from reports.collection import (
    BUDGETS,
    JUDGED,
    ONE_EXAMPLE,
    PAPER_EXAMPLES,
    PROMPTS,
    LoopStopped,
    budget_left,
    run_round,
)


class Command(BaseCommand):
    help = (
        "Retrain the campaign's ParaTag detector on its taggings, generate candidates with ParaTag's prompt, "
        "keep those the detector finds paraphrases (plus a random share of the others) for the judges to tag."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's slug (its taggings train the detector)")
        parser.add_argument("sources", help="the sentences to paraphrase: one per line, or a CSV with a source column")
        parser.add_argument("--model", default="embedded", help=f"one of: {', '.join(model_names())}")
        parser.add_argument("--n", type=int, default=3, help="candidates per source (sampling)")
        parser.add_argument("--max-new-tokens", type=int, default=64)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--epochs", type=int, default=3, help="the detector's training epochs")
        parser.add_argument("--unselected-share", type=float, default=0.2)
        parser.add_argument(
            "--prompt",
            choices=PROMPTS,
            default=JUDGED,
            help=f"{JUDGED} (the paper's, section 4.1): examples drawn from the previous round's pairs the judges "
            f"tagged as full paraphrases (round 1: the campaign's own); {ONE_EXAMPLE}: the example the paper prints",
        )
        parser.add_argument(
            "--examples", type=int, default=PAPER_EXAMPLES, help=f"example pairs in the prompt ({PAPER_EXAMPLES})"
        )
        for name, what in BUDGETS.items():
            parser.add_argument(
                f"--max-{name}",
                type=int,
                metavar="N",
                help=f"the loop stops once this many {what} (kept for later rounds; 0 removes it)",
            )

    def handle(self, *args, **options):
        campaign = Campaign.objects.filter(slug=options["campaign"], deleted_at__isnull=True).first()
        if campaign is None:
            raise CommandError(f"no campaign with slug {options['campaign']}")
        path = Path(options["sources"])
        if not path.is_file():
            raise CommandError(f"no sources file at {path}")
        try:
            sources = parse_sources(path.read_bytes()[: settings.PARASOL_IMPORT_MAX_BYTES], path.name)
            run = run_round(
                campaign,
                sources,
                epochs=options["epochs"],
                model=options["model"],
                decoding="sampling" if options["n"] > 1 else "greedy",
                candidates=options["n"],
                max_new_tokens=options["max_new_tokens"],
                seed=options["seed"],
                unselected_share=options["unselected_share"],
                prompt=options["prompt"],
                examples=options["examples"],
                budget={name: options[f"max_{name}"] for name in BUDGETS if options[f"max_{name}"] is not None},
            )
        except (LoopStopped, TooFewPairs, GenerationError, MetricUnavailable, UnicodeDecodeError) as error:
            raise CommandError(str(error)) from None
        outputs = run.outputs.filter(pair__isnull=False)
        self.stdout.write(
            f"Round {run.collection_round} (run {run.pk}): detector {run.detector} trained on "
            f"{run.detector_train_pairs} pairs (held-out span F1 {run.detector_f1}); "
            f"{outputs.filter(selected=True).count()} of {outputs.count()} candidates selected; "
            f"{outputs.filter(pair__chosen=True).count()} sent to judges; prompt: "
            + (f"{len(run.prompt_pairs)} judged full paraphrases." if run.prompt_pairs else "the one printed example.")
        )
        left = budget_left(campaign, run.collection_budget)
        self.stdout.write(f"Budget: {left}." if left else "No budget set: the loop stops when you stop it.")
