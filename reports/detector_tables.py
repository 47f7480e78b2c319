"""The report's detector tables: the stored detectors of a campaign and the `paratag` tags against the judges.

Apart from `reports.detector` (training), which reads the taggings through `reports.task_sections.spans`:
`reports.task_sections.spans` builds these tables, so they must not import it back.
"""

import pandas as pd

from annotation.tagging import SIDES
from campaigns.models import Pair, Score
from campaigns.scores import latest_details, latest_signatures
from metrics.paratag import campaign_detectors_path, detector_versions, read_manifest
from reports.analysis.detector import detector_agreement

METRIC = "paratag"


def detector_cards(campaigns) -> pd.DataFrame:
    """The stored detectors trained on these campaigns: test figures beside the judges' and the baselines'.

    Read from each campaign's own directory (keyed by pk), never matched by slug: a slug can be
    renamed, or reused after a deletion, and would show another campaign's figures.
    """
    rows = []
    for campaign in campaigns:
        directory = campaign_detectors_path(campaign.pk)
        for name in detector_versions(directory):
            manifest = read_manifest(directory / name)
            human = manifest.get("human") or {}
            rows.append(
                {
                    "detector": name,
                    "encoder": manifest["encoder"],
                    "n_test_pairs": manifest["test"]["n_pairs"],
                    "word_accuracy": manifest["test"]["word_accuracy"],
                    "span_f1": manifest["test"]["span_f1"],
                    "kappa": manifest["test"]["kappa"],
                    "diff_span_f1": manifest["baselines"]["tag_different_words"]["span_f1"],
                    "human_word_accuracy": human.get("word_accuracy"),
                    "human_span_f1": human.get("span_f1"),
                }
            )
    return pd.DataFrame(rows, columns=DETECTOR_CARD_COLUMNS)


DETECTOR_CARD_COLUMNS = [
    "detector",
    "encoder",
    "n_test_pairs",
    "word_accuracy",
    "span_f1",
    "kappa",
    "diff_span_f1",
    "human_word_accuracy",
    "human_span_f1",
]


def predicted_tags(campaigns, pair_id_of_pk) -> pd.DataFrame:
    """The `paratag` metric's tags per pair, under its most recent signature (one detector version only)."""
    scores = Score.objects.filter(pair__campaign__in=campaigns, metric=METRIC)
    signatures = {key: value for key, value in latest_signatures(scores).items() if key == METRIC}
    details_of = {
        pair_pk: details
        for pair_pk, _metric, details in latest_details(scores, signatures)
        if pair_pk in pair_id_of_pk.index and isinstance(details, dict) and "tags" in details
    }
    # Judges tagged the pair's stored words: the detector's tags compare with theirs only over the same
    # tokenisation (scores from before tokenisations were recorded were made by version 1).
    stored = dict(Pair.objects.filter(pk__in=list(details_of)).values_list("pk", "tokenisation"))
    rows = [
        {"pair_id": pair_id_of_pk[pair_pk], **{f"{side}_tags": _tags(details, side) for side in SIDES}}
        for pair_pk, details in details_of.items()
        if details.get("tokenisation", 1) == stored.get(pair_pk)
    ]
    return pd.DataFrame(rows, columns=["pair_id", "source_tags", "hypothesis_tags"])


def _tags(details, side):
    indexes = set(details["tags"].get(side, []))
    n_words = details.get("n_words", {}).get(side)
    return [int(i in indexes) for i in range(n_words if n_words is not None else max(indexes, default=-1) + 1)]


def detector_vs_judges(campaigns, taggings, pair_id_of_pk) -> pd.DataFrame:
    """Word accuracy, span F1 and kappa of the `paratag` tags against each judge and the majority."""
    return detector_agreement(taggings, predicted_tags(campaigns, pair_id_of_pk))
