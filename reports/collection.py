"""ParaTag's collection loop (seed 004, sections 4.1 and 4.3), one round at a time.

A round first checks the loop's budget (its stopping rule: rounds, pairs the judges accepted as
full paraphrases, or judgments), then retrains the campaign's detector on every tagging so far
(the judges' and a pre-tagged import's), generates candidates with ParaTag's prompt, scores them
with that very detector and selects the ones it finds paraphrases (the run's rule on the `paratag`
metric), which then go to the judges to tag, with a random share of the others to measure the
filter. The next round retrains on the new taggings.

The prompt is the paper's by default (section 4.1): `PAPER_EXAMPLES` (20) pairs drawn at random
from those of the previous round the judges tagged as full paraphrases (no highlighted word, as
section 4.3 counts them); round 1 draws from the campaign's own tagged pairs (the paper's MRPC
pairs annotated as paraphrases). `ONE_EXAMPLE` keeps the built-in prompt with the example the paper
prints. Each run records its round, its detector (version, training pairs, held-out span F1), its
prompt's pairs and the budget, and so does each pair's metadata; the report's `collection_rounds`
table reads them.

It lives in `reports` because it joins three apps: training reads the taggings (`reports.detector`),
generation makes the candidates, scoring stores the detector's scores.
"""

import hashlib
import random

from django.db.models import Max

from annotation.models import Judgment
from generation.errors import GenerationError
from generation.models import GenerationOutput, GenerationRun, create_run
from generation.selection import select_candidates
from generation.templates import PARATAG_ASK, ChatTemplate
from metrics.paratag import detectors_path
from metrics.registry import get_metric
from scoring.service import pairs_missing, store_scores

from .detector import tagged_pairs, train_campaign_detector

METRIC = "paratag"
PAPER_EXAMPLES = 20  # section 4.1: "we randomly select 20 paraphrasing sentence pairs into the prompt"
JUDGED = "judged"  # the paper's prompt: examples the judges tagged as full paraphrases in the previous round
ONE_EXAMPLE = "one-example"  # the built-in `paratag` template: the one example the paper prints
PROMPTS = (JUDGED, ONE_EXAMPLE)
BUDGETS = {
    "rounds": "rounds",
    "accepted": "pairs the judges accepted as full paraphrases",
    "judgments": "judgments of the loop's pairs",
}


class LoopStopped(Exception):
    """The loop's budget is spent: no round is run (the message says which budget and how it stands)."""


def next_round(campaign):
    found = campaign.generation_runs.aggregate(last=Max("collection_round"))["last"]
    return (found or 0) + 1


def run_round(
    campaign,
    sources,
    *,
    prompt=JUDGED,
    examples=PAPER_EXAMPLES,
    budget=None,
    epochs=3,
    learning_rate=None,
    detectors_dir=None,
    created_by=None,
    **options,
):
    """Check the budget, train, generate, score and select one round; returns the run. `options`: the run's
    settings (model, candidates, decoding, selection, ...); the template is ParaTag's and the metric its detector.
    `budget`: {"rounds" | "accepted" | "judgments": limit}, kept for the next rounds (see `loop_budget`).

    `LoopStopped` says the budget is spent; `TooFewPairs` (from training) how many taggings are needed;
    GenerationError what is wrong with the run or its prompt (no judged full paraphrase to draw from).
    """
    budget = loop_budget(campaign, budget)
    spent = budget_spent(campaign, budget)
    if spent:
        raise LoopStopped(spent)
    number = next_round(campaign)
    template, prompt_pairs = round_prompt(campaign, number, prompt, examples, seed=options.get("seed", 0))
    directory = detectors_path(detectors_dir)
    rates = {"learning_rates": (learning_rate,)} if learning_rate else {}
    path, manifest = train_campaign_detector(campaign, epochs=epochs, directory=directory, **rates)
    options.setdefault("selection", GenerationRun.Selection.TOP)
    run = create_run(
        campaign,
        sources=sources,
        templates=[template],
        created_by=created_by,
        scored_here=True,
        selection_metric=METRIC,
        **options,
    )
    GenerationRun.objects.filter(pk=run.pk).update(
        collection_round=number,
        detector=path.name,
        detector_train_pairs=manifest["split"]["n_pairs"]["train"],
        detector_f1=manifest["test"].get("span_f1"),
        prompt_pairs=prompt_pairs,
        collection_budget=budget,
    )
    run.refresh_from_db()
    run.run_inline()
    score_with_detector(run, path.name, path.parent)  # the campaign's own directory (campaign-<pk>)
    select_candidates(run)
    run.refresh_from_db()
    return run


def round_prompt(campaign, number, prompt=JUDGED, examples=PAPER_EXAMPLES, seed=0):
    """(the round's ParaTag template, the pair ids of its examples). The paper's: `examples` pairs drawn at
    random (from the round and the seed) among the full paraphrases judged in the previous round, or, in
    round 1, among the campaign's own tagged pairs; fewer when fewer exist. GenerationError when none does."""
    if prompt == ONE_EXAMPLE:
        return "paratag", []
    if prompt != JUDGED:
        raise GenerationError(f"unknown prompt {prompt!r}; use one of {', '.join(PROMPTS)}")
    if examples < 1:
        raise GenerationError("the prompt needs at least one example pair")
    pool, where = full_paraphrases(campaign, number - 1)
    if not pool:
        raise GenerationError(
            f"round {number}'s prompt draws its examples from {where} the judges tagged as full paraphrases "
            "(no highlighted word), and there is none yet: let the judges tag them, or use the one-example prompt"
        )
    draw = random.Random(int(hashlib.sha256(f"{campaign.pk}:{number}:{seed}".encode()).hexdigest()[:12], 16))
    chosen = draw.sample(pool, min(examples, len(pool)))
    shots = "".join(f"Premise: {pair.source}\nParaphrase: {pair.hypothesis}\n" for pair in chosen)
    return ChatTemplate("paratag", (("user", shots + PARATAG_ASK),)), [pair.external_id for pair in chosen]


def full_paraphrases(campaign, previous_round):
    """(the pairs of `previous_round` whose judges' majority tagging highlights no word, where they come from in
    words). Round 0 stands for the campaign's own pairs, those no generation run made (the paper's MRPC)."""
    examples, by_id, _ = tagged_pairs(campaign)
    if previous_round >= 1:
        made = GenerationOutput.objects.filter(run__campaign=campaign, run__collection_round=previous_round)
        allowed = set(made.exclude(pair=None).values_list("pair__external_id", flat=True))
        where = f"round {previous_round}'s pairs"
    else:
        generated = GenerationOutput.objects.filter(run__campaign=campaign).exclude(pair=None)
        made = set(generated.values_list("pair__external_id", flat=True))
        allowed = {pair_id for pair_id in by_id if pair_id not in made}
        where = "the campaign's own tagged pairs"
    pool = [
        by_id[example.pair_id]
        for example in examples
        if example.pair_id in allowed and not any(example.tags["source"]) and not any(example.tags["hypothesis"])
    ]
    return sorted(pool, key=lambda pair: pair.pk), where


def loop_budget(campaign, given=None):
    """The loop's budget: what the last round carried, with `given`'s limits set or changed (a limit of 0
    removes it). Unknown names are refused."""
    unknown = set(given or {}) - set(BUDGETS)
    if unknown:
        raise GenerationError(f"unknown budget {', '.join(sorted(unknown))}; use {', '.join(BUDGETS)}")
    last = campaign.generation_runs.exclude(collection_round=None).order_by("-collection_round", "-pk").first()
    budget = dict(last.collection_budget) if last is not None else {}
    for name, limit in (given or {}).items():
        if limit is None:
            continue
        if limit < 0:
            raise GenerationError(f"the {name} budget must be 0 (none) or more, not {limit}")
        budget.pop(name, None) if limit == 0 else budget.update({name: int(limit)})
    return budget


def loop_spending(campaign):
    """{budget name: used so far}: rounds run, loop pairs the judges accepted as full paraphrases, their judgments."""
    runs = campaign.generation_runs.exclude(collection_round=None)
    outputs = GenerationOutput.objects.filter(run__in=runs).exclude(pair=None)
    pair_pks = outputs.values_list("pair_id", flat=True)
    ids = set(outputs.values_list("pair__external_id", flat=True))
    examples, _, _ = tagged_pairs(campaign)
    accepted = sum(
        1
        for example in examples
        if example.pair_id in ids and not any(example.tags["source"]) and not any(example.tags["hypothesis"])
    )
    judgments = Judgment.objects.counted().filter(pair_id__in=pair_pks).count()
    return {"rounds": runs.values("collection_round").distinct().count(), "accepted": accepted, "judgments": judgments}


def budget_spent(campaign, budget):
    """Why the loop stops (a budget reached, in words), or "" when a round may run."""
    if not budget:
        return ""
    used = loop_spending(campaign)
    reached = [f"{used[name]:,} {BUDGETS[name]} of {limit:,}" for name, limit in budget.items() if used[name] >= limit]
    return "the loop's budget is spent: " + "; ".join(reached) if reached else ""


def budget_left(campaign, budget):
    """The budget as it stands after a round, in words ("" without one)."""
    if not budget:
        return ""
    used = loop_spending(campaign)
    return "; ".join(f"{used[name]:,} of {limit:,} {BUDGETS[name]}" for name, limit in budget.items())


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
