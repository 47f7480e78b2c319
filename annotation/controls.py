"""Hidden control items: pairs whose answer is known, to check each judge's attention.

Following PEM's fixed-score controls, Parasol builds two kinds from the
campaign's own sentences: a sentence paired with itself (expected: paraphrase,
i.e. Mostly similar or Same meaning) and a sentence paired with the hypothesis
of another, unrelated pair (expected: non-paraphrase). Researchers can also
upload their own. Controls are placed at random positions in a judge's
sequence, never at the very end, never twice, and left out of every result.

PEM's three artificial systems (`add_pem_controls`, corpus PEM_CONTROL_CORPUS) are control
pairs of another kind: never shown to judges, scored by the metrics, and joined with their
fixed ratings to the judges' mean in the criteria report (PEM 5.2).
"""

import random
from collections import Counter

from django.db import transaction

from annotation.tasktypes.criteria.scale import PEM_CONTROL_SYSTEMS
from campaigns.importers import MetadataKeyCap
from campaigns.models import PEM_CONTROL_CORPUS, Pair
from campaigns.task_types import task_type_of
from metrics.words import word_tokens

from .models import CampaignProtocol, ControlKind


def protocol_of(campaign):
    protocol, _ = CampaignProtocol.objects.get_or_create(campaign=campaign)
    return protocol


def controls_per_judge(campaign):
    if not task_type_of(campaign).control_kinds:
        return 0
    share = protocol_of(campaign).control_share
    if share <= 0:
        return 0
    return max(1, round(campaign.pairs_per_judge * share / (1 - share)))


def _control_pair(campaign, external_id, source, hypothesis, expected, metadata):
    return Pair.build(
        campaign,
        external_id=external_id,
        corpus="control",
        source=source,
        hypothesis=hypothesis,
        gold_label=expected,
        is_control=True,
        metadata=metadata,
    )


# Controls are built from (at most) this many of the campaign's first real pairs.
CONTROL_SOURCE_PAIRS = 2000


def _controls_to_build(n_pairs, wanted):
    """How many controls a campaign with `n_pairs` real pairs gets built (none from fewer than two)."""
    return min(n_pairs, max(2 * wanted, 10)) if n_pairs >= 2 else 0


def controls_planned(campaign):
    """How many hidden controls a judge joining now gets (the same count `plan_control_positions` draws)."""
    wanted = controls_per_judge(campaign)
    if wanted == 0:
        return 0
    available = campaign.check_pairs.count()
    if available == 0:
        available = _controls_to_build(campaign.real_pairs[:CONTROL_SOURCE_PAIRS].count(), wanted)
    return min(wanted, available)


def ensure_control_pairs(campaign, seed=None):
    """Build the campaign's control pairs from its sentences if it has none (and uses controls)."""
    wanted = controls_per_judge(campaign)
    if wanted == 0 or campaign.check_pairs.exists():
        return 0
    pairs = list(campaign.real_pairs.values_list("source", "hypothesis")[:CONTROL_SOURCE_PAIRS])
    count = _controls_to_build(len(pairs), wanted)
    if count == 0:
        return 0
    rng = random.Random(seed)
    chosen = rng.sample(range(len(pairs)), count)
    # PEM's criteria can check only the source as its own hypothesis (task type's control_kinds).
    kinds = task_type_of(campaign).control_kinds
    controls = []
    for n, i in enumerate(chosen):
        source = pairs[i][0]
        if kinds[n % len(kinds)] == ControlKind.IDENTICAL:
            hypothesis, kind, expected = source, ControlKind.IDENTICAL, 1
        else:
            other = rng.choice([j for j in range(len(pairs)) if pairs[j][0] != source] or [i])
            hypothesis, kind, expected = pairs[other][1], ControlKind.UNRELATED, 0
        controls.append(_control_pair(campaign, f"control-{n + 1}", source, hypothesis, expected, {"control": kind}))
    Pair.objects.bulk_create(controls, ignore_conflicts=True)
    return len(controls)


def add_control_pairs(campaign, rows):
    """Uploaded control items (PairRow-like): each row's gold label is the expected binary answer."""
    rows = list(rows)
    missing = [row.location or "a row" for row in rows if row.gold_label is None]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        raise ValueError(f"control items need a label (the expected answer, 1 = paraphrase): none on {shown}")
    cap = MetadataKeyCap(campaign)
    for row in rows:
        cap.add({**row.metadata, "control": ControlKind.UPLOADED}, row.location or "a row")
    with transaction.atomic():
        first = campaign.control_pairs.count() + 1
        Pair.objects.bulk_create(
            _control_pair(
                campaign,
                f"control-upload-{first + i}",
                row.source,
                row.hypothesis,
                row.gold_label,
                {**row.metadata, "control": ControlKind.UPLOADED},
            )
            for i, row in enumerate(rows)
        )
    return len(rows)


def plan_control_positions(campaign, rng=random):
    """Random positions (1-based, in the real-pair phase) for this judge's controls; never the last one."""
    k = controls_planned(campaign)
    if k == 0:
        return []
    length = campaign.pairs_per_judge + k
    return sorted(rng.sample(range(1, length), k))


def unigram_sentence(counts: Counter, length: int, rng) -> str:
    """`length` words drawn independently from the corpus's unigram distribution (`counts`), joined by spaces."""
    words, weights = zip(*sorted(counts.items()))
    return " ".join(rng.choices(words, weights=weights, k=max(1, length)))


def add_pem_controls(campaign, seed=0):
    """PEM's three artificial systems for every source of the campaign (section 5.1); returns how many were made.

    Per source: the source itself; a random source sentence of another pair of the same corpus;
    a sentence of as many words as the source drawn from the unigram distribution of all the
    campaign's sentences. They carry fixed ratings (`annotation.tasktypes.criteria.scale.PEM_CONTROLS`), are scored
    like real pairs and are never shown to a judge. Sources that already have them are skipped.
    """
    real = list(campaign.real_pairs.order_by("pk").values_list("source", "hypothesis", "corpus"))
    done = set(campaign.control_pairs.filter(corpus=PEM_CONTROL_CORPUS).values_list("source", flat=True))
    sources = list(dict.fromkeys((source, corpus) for source, _, corpus in real if source not in done))
    if not sources:
        return 0
    rng = random.Random(seed)
    counts = Counter(
        word for source, hypothesis, _ in real for text in (source, hypothesis) for word in word_tokens(text)
    )
    by_corpus = {}
    for source, _, corpus in real:
        by_corpus.setdefault(corpus, set()).add(source)
    start = campaign.control_pairs.filter(corpus=PEM_CONTROL_CORPUS).count() // len(PEM_CONTROL_SYSTEMS)
    controls = []
    for n, (source, corpus) in enumerate(sources, start=start + 1):
        others = sorted(by_corpus[corpus] - {source}) or sorted({s for s, _, _ in real} - {source}) or [source]
        hypotheses = {
            "pem-source": source,
            "pem-random": rng.choice(others),
            "pem-unigram": unigram_sentence(counts, len(word_tokens(source)), rng),
        }
        for kind, hypothesis in hypotheses.items():
            controls.append(
                Pair.build(
                    campaign,
                    external_id=f"{kind}-{n}",
                    corpus=PEM_CONTROL_CORPUS,
                    source=source,
                    hypothesis=hypothesis,
                    is_control=True,
                    metadata={"control": kind, "system": PEM_CONTROL_SYSTEMS[kind], "corpus": corpus},
                )
            )
    with transaction.atomic():
        Pair.objects.bulk_create(controls, ignore_conflicts=True)
    return len(controls)
