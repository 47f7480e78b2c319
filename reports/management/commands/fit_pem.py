"""Fit PEM's SVR on a criteria campaign and store it as a versioned model (PEM, sections 4.5 and 6.1)."""

import math

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.tasktypes.criteria.tasktype import Criteria, ratings_frame
from campaigns.models import Campaign
from campaigns.task_types import task_type_of
from metrics.pem import FEATURES, MODEL_SETTING, save_model
from reports.analysis.criteria import SPLITS, fit_pem_model
from reports.frames import load_frames
from reports.task_sections.criteria import NO_SYSTEM, pem_controls_frame


class Command(BaseCommand):
    help = (
        "Fit PEM's RBF SVR from pivot_f1, lm_fluency and ngram_f1 to the human Overall of CAMPAIGN (judges' mean, "
        "with PEM's fixed-score controls unless --without-controls), measured on held-out sources, and store it "
        f"under PARASOL_PEM_MODEL_DIR/campaign-<id>/v<N>; set {MODEL_SETTING} to that directory to score with `pem`."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the slug of a campaign rated as PEM rates (its four ratings)")
        parser.add_argument(
            "--split", choices=SPLITS, default="sources", help="sources: GroupKFold on sources; paper: 2/3 train"
        )
        parser.add_argument("--folds", type=int, default=5, help="folds over sources (--split sources)")
        parser.add_argument("--without-controls", action="store_true", help="fit on the judges' mean alone")

    def handle(self, *args, campaign, split, folds, without_controls, **options):
        found = Campaign.objects.filter(slug=campaign).first()
        if found is None:
            raise CommandError(f"no campaign with slug {campaign!r}")
        if not isinstance(task_type_of(found), Criteria):
            raise CommandError(f"{campaign} is a {found.task_type!r} campaign: PEM is fitted on PEM's four ratings")
        if folds < 2:
            raise CommandError("--folds must be at least 2")
        frames = load_frames([found], values=True)
        missing = [f for f in FEATURES if f not in frames.signatures]
        if missing:
            raise CommandError(
                f"{campaign} has no {', '.join(missing)} scores: run `manage.py score {campaign} --metrics "
                f"{' '.join(FEATURES)} --inline` (pivot_f1 needs PARASOL_PEM_PHRASE_TABLE)"
            )
        pairs = frames.pairs.assign(system=frames.pairs["system"].replace("", NO_SYSTEM))
        judgments = frames.judgments.join(ratings_frame(frames.judgments))
        controls = None if without_controls else pem_controls_frame([found], frames.signatures)
        try:
            params, evaluation = fit_pem_model(judgments, pairs, list(FEATURES), folds, split, controls)
        except ValueError as error:
            raise CommandError(str(error)) from None
        manifest = {
            "campaign_pk": found.pk,
            "features": {feature: frames.signatures[feature] for feature in FEATURES},
            "controls": not without_controls and controls is not None and not controls.empty,
            **{key: _plain(value) for key, value in evaluation.items()},
        }
        directory = save_model(
            settings.PARASOL_PEM_MODEL_DIR, found.slug, params, manifest, folder=f"campaign-{found.pk}"
        )
        self.stdout.write(
            f"Held-out ({split}): {evaluation['n_test_pairs']} pairs of {evaluation['n_sources']} sources; "
            f"Pearson with Overall {evaluation['sentence_level']:.3f} (sentence), "
            f"{evaluation['system_level']:.3f} (system)."
        )
        self.stdout.write(self.style.SUCCESS(f"Stored PEM model {directory}; set {MODEL_SETTING}={directory}"))


def _plain(value):
    """A JSON-able value: NaN as None, numpy numbers as Python numbers."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value
