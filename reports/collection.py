"""ParaTag's collection loop (seed 004, section 4.3), one round at a time.

A round retrains the campaign's detector on every tagging so far (the judges' and a pre-tagged
import's), generates candidates with ParaTag's prompt, scores them with that very detector and selects
the ones it finds paraphrases (the run's rule on the `paratag` metric), which then go to the judges to
tag, with a random share of the others to measure the filter. The next round retrains on the new
taggings. Each run records its round and its detector (version, training pairs, held-out span F1), and
so does each pair's metadata, which the report's `collection_rounds` table reads.

It lives in `reports` because it joins three apps: training reads the taggings (`reports.detector`),
generation makes the candidates, scoring stores the detector's scores.
"""

from django.db.models import Max

from generation.models import GenerationRun, create_run
from generation.selection import select_candidates
from scoring.metrics.paratag import detectors_path
from scoring.metrics.registry import get_metric
from scoring.service import pairs_missing, store_scores

from .detector import train_campaign_detector

METRIC = "paratag"


def next_round(campaign):
    found = campaign.generation_runs.aggregate(last=Max("collection_round"))["last"]
    return (found or 0) + 1


def run_round(campaign, sources, *, epochs=3, learning_rate=None, detectors_dir=None, created_by=None, **options):
    """Train, generate, score and select one round; returns the run. `options`: the run's settings
    (model, candidates, decoding, selection, ...); the template is ParaTag's and the metric its detector.

    `TooFewPairs` (from training) says how many taggings are needed; GenerationError, what is wrong with the run.
    """
    directory = detectors_path(detectors_dir)
    rates = {"learning_rates": (learning_rate,)} if learning_rate else {}
    path, manifest = train_campaign_detector(campaign, epochs=epochs, directory=directory, **rates)
    options.setdefault("selection", GenerationRun.Selection.TOP)
    run = create_run(
        campaign,
        sources=sources,
        templates=["paratag"],
        created_by=created_by,
        scored_here=True,
        selection_metric=METRIC,
        **options,
    )
    GenerationRun.objects.filter(pk=run.pk).update(
        collection_round=next_round(campaign),
        detector=path.name,
        detector_train_pairs=manifest["split"]["n_pairs"]["train"],
        detector_f1=manifest["test"].get("span_f1"),
    )
    run.refresh_from_db()
    run.run_inline()
    score_with_detector(run, path.name, path.parent)  # the campaign's own directory (campaign-<pk>)
    select_candidates(run)
    run.refresh_from_db()
    return run


def score_with_detector(run, detector, directory):
    """The round's candidates scored by the detector it trained (not whichever is the latest by then)."""
    scorer = get_metric(METRIC, detector=detector, detectors_dir=str(directory))
    signature = scorer.signature_string()
    pair_pks = list(run.outputs.filter(pair__isnull=False).values_list("pair_id", flat=True))
    rows = list(pairs_missing(METRIC, signature, pair_pks).order_by("pk").values_list("pk", "source", "hypothesis"))
    if rows:
        values, details = scorer.score_with_details(
            sources=[row[1] for row in rows], hypotheses=[row[2] for row in rows]
        )
        store_scores(METRIC, signature, [row[0] for row in rows], values, details)
    return len(rows)
