"""The selection stage: which of a run's candidates go to judges, by a registered metric's scores.

A run generates `candidates` outputs per source and template; the scoring workers score their
pairs like any other; once every candidate has the selection metric's score, `select_candidates`
ranks each (source, template) group and selects by the run's rule. Judges get the selected
candidates and a random `unselected_share` of the others, drawn independently per candidate
(`Pair.chosen`, with `Pair.choice_probability` 1 or the share), so the report can compare the
paraphrase rates of both without bias. The pairs not drawn stay out of judges' queues
(`annotation.assignment.open_pairs`). Under active choice a sent candidate awaits the draw, which happens
among the sent ones only and multiplies its probability by the selection's chance (`reports.active`).

Idempotent: only undecided candidates are decided, each by a conditional UPDATE under the run's
row lock, and the draw is a hash of the run's seed and the candidate, so a retried selection
decides nothing twice and draws the same candidates.
"""

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from django.db import models, transaction
from django.utils import timezone

from campaigns.models import Pair
from campaigns.scores import latest_scores
from metrics.base import called_paraphrase
from metrics.filters import pair_bleu
from metrics.registry import HIGHER, direction_of, queue_of
from parasol.queues import queue_lengths

from .models import GenerationOutput, GenerationRun


@dataclass(frozen=True)
class Verdict:
    rank: int
    score: float
    selected: bool
    sent: bool
    probability: float


def candidates_of(run):
    """The run's candidates that became pairs (rejected outputs never reach the selection)."""
    return run.outputs.filter(accepted=True, pair__isnull=False)


def current_scores(run, pair_pks):
    """{pair pk: value} under the selection metric's newest signature among these pairs (never mixed), as
    the scoring workers stored them."""
    return latest_scores(run.selection_metric, pair_pks)


def why_not_yet(run):
    """Why the selection cannot run now (a sentence), or "" when it can (or has nothing left to do)."""
    if not run.selects:
        return ""
    if run.is_active:
        return "generation is still running: the selection waits for every candidate"
    pending = candidates_of(run).filter(selected__isnull=True)
    if not pending.exists():
        return ""
    pair_pks = list(pending.values_list("pair_id", flat=True))
    missing = len(pair_pks) - len(current_scores(run, pair_pks))
    if missing:
        detector = " (ParaTag scores need the campaign's trained detector)" if run.selection_metric == "paratag" else ""
        return (
            f"no {run.selection_metric} scores yet for {missing} of {len(pair_pks)} candidates{detector}: "
            "the scoring workers score them (manage.py score), then the selection runs"
        )
    return ""


def select_candidates(run) -> str:
    """Decide every undecided candidate if all are scored; returns why it could not, or ""."""
    with transaction.atomic():
        GenerationRun.objects.select_for_update().filter(pk=run.pk).first()  # one selection at a time
        run.refresh_from_db()
        reason = why_not_yet(run)
        if reason or not run.selects:
            return reason
        pending = list(candidates_of(run).filter(selected__isnull=True).select_related("source", "pair"))
        if pending:
            groups = defaultdict(list)
            for output in candidates_of(run).select_related("source"):
                groups[(output.source_id, output.template)].append(output)
            scores = current_scores(run, [output.pair_id for outputs in groups.values() for output in outputs])
            verdicts = {}
            for outputs in groups.values():
                verdicts.update(_decide(run, outputs, scores))
            for output in pending:
                _record(run, output, verdicts[output.pk])
        GenerationRun.objects.filter(pk=run.pk, selected_at__isnull=True).update(selected_at=timezone.now())
    return ""


def _decide(run, outputs, scores):
    """{output pk: Verdict} for one (source, template) group, ranked by the metric (best first)."""
    direction = direction_of(run.selection_metric)
    sign = 1 if direction == HIGHER else -1
    ranked = sorted(outputs, key=lambda output: (-sign * scores[output.pair_id], output.candidate))
    chosen = set()
    for output in ranked:
        eligible = (
            run.selection_max_bleu is None or pair_bleu(output.source.text, output.text) <= run.selection_max_bleu
        )
        if not eligible:
            continue
        if run.selection == GenerationRun.Selection.TOP and not chosen:
            chosen.add(output.pk)
        elif run.selection == GenerationRun.Selection.THRESHOLD:
            # The reports' one rule: at least as close as the threshold (a ParaPLUIE score of 0 passes 0).
            if called_paraphrase(scores[output.pair_id], run.selection_threshold, direction):
                chosen.add(output.pk)
    verdicts = {}
    for rank, output in enumerate(ranked, start=1):
        selected = output.pk in chosen
        probability, sent = judging_chance(run, output, selected)
        verdicts[output.pk] = Verdict(rank, scores[output.pair_id], selected, sent, probability)
    return verdicts


def judging_chance(run, output, selected):
    """(the chance the selection gave the candidate of going to judges, whether it went): every selected one,
    and each unselected one with the run's `unselected_share`, drawn from the run's seed."""
    if selected:
        return 1.0, True
    return run.unselected_share, _draw(run, output) < run.unselected_share


def selection_design(campaign):
    """{pair pk: (chance, sent)} of the campaign's candidates a selection decided (see `judging_chance`), and
    how many candidates a selection has still to decide. Active choice draws only among the sent ones and
    multiplies its probability by the chance (`reports.active`)."""
    candidates = GenerationOutput.objects.filter(run__campaign=campaign, accepted=True, pair__isnull=False)
    candidates = candidates.exclude(run__selection=GenerationRun.Selection.ALL)
    design = {
        output.pair_id: judging_chance(output.run, output, output.selected)
        for output in candidates.filter(selected__isnull=False).select_related("run")
    }
    return design, candidates.filter(selected__isnull=True).count()


def _draw(run, output):
    """A uniform number in [0, 1) fixed by the run's seed and the candidate: a retry draws the same."""
    digest = hashlib.sha256(f"{run.seed}:{run.pk}:{output.pk}".encode()).hexdigest()
    return int(digest[:13], 16) / 16**13


def _record(run, output, verdict):
    """Store one verdict on the output and its pair, unless another selection already did (conditional UPDATE)."""
    decided = GenerationOutput.objects.filter(pk=output.pk, selected__isnull=True).update(
        rank=verdict.rank, selection_score=verdict.score, selected=verdict.selected
    )
    if decided != 1:
        return
    pair = output.pair
    pair.metadata = {**pair.metadata, **provenance(run, verdict)}
    # Under active choice a sent candidate still awaits its draw (`reports.active`): judges see no pair before it.
    chosen = None if verdict.sent and run.campaign.active_choice else verdict.sent
    Pair.objects.filter(pk=pair.pk).update(
        metadata=pair.metadata, chosen=chosen, choice_probability=verdict.probability
    )


def provenance(run, verdict):
    """What the pair's metadata (and so every export) records of its selection."""
    return {
        "selection": f"{run.selection} by {run.selection_metric}",
        "candidate_rank": verdict.rank,
        "selection_score": verdict.score,
        "selected": verdict.selected,
        "sent_to_judges": verdict.sent,
        "judging_probability": verdict.probability,
    }


def scoring_queue(metric):
    """Where the metric's scoring stands in its workers' queue, in words (the selection's wait)."""
    queue = queue_of(metric)
    try:
        ahead = queue_lengths()[queue]
    except Exception as error:  # the broker does not answer: say so rather than guess
        return f"the {queue!r} queue cannot be read now ({type(error).__name__})"
    if not ahead:
        return f"no task waits in the {queue!r} queue: the candidates' batches are running or next"
    return f"{ahead} scoring task(s) wait in the {queue!r} queue, the candidates' batches among them in turn"


def stage_progress(run):
    """Each stage's counts for the run's page: generated, scored, selected, sent to judges; why it waits, where
    its scores stand in their queue, and whether the selection can run now."""
    candidates = candidates_of(run)
    pair_pks = list(candidates.values_list("pair_id", flat=True))
    generation = run.progress()
    counts = candidates.aggregate(
        decided=models.Count("pk", filter=models.Q(selected__isnull=False)),
        selected=models.Count("pk", filter=models.Q(selected=True)),
    )
    held_back = Pair.objects.filter(pk__in=pair_pks, chosen=False).count()
    scored = len(current_scores(run, pair_pks)) if run.selects else None
    waiting = why_not_yet(run)
    return {
        "generated": generation["done"],
        "expected": generation["expected"],
        "candidates": len(pair_pks),
        "scored": scored,
        "decided": counts["decided"],
        "selected": counts["selected"] if run.selects else len(pair_pks),
        "sent": len(pair_pks) - held_back,
        "waiting": waiting,
        # Only while scores are missing: the queue they wait in (a Redis read, never a worker's answer).
        "queue": scoring_queue(run.selection_metric) if waiting and not run.is_active and scored is not None else "",
        # "Select now" is offered only when it would run: generation over, every candidate scored, some undecided.
        "can_select": run.selects and not waiting and counts["decided"] < len(pair_pks),
        "selected_at": run.selected_at,
    }
