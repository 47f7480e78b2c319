"""ParaTag's detector against the judges: the word-level figures of Table 3, per judge and for the majority.

`predicted` holds the detector's tags per pair (from the `paratag` metric's details);
each judge's tagging is the reference on the pairs both tagged, as the first judge is
in the judges' own agreement table, so the figures read side by side.
"""

import pandas as pd

from annotation.tagging import SIDES
from metrics.tag_agreement import sequence_agreement
from reports.analysis.spans import majority_tags

MAJORITY = "majority"
COLUMNS = ["against", "n_pairs", "n_words", "word_accuracy", "span_f1", "kappa"]


def detector_agreement(taggings: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    """One row per judge and one for the per-word majority; `predicted` has `pair_id` and `<side>_tags`."""
    guess = predicted.set_index("pair_id")
    rows = [_row(MAJORITY, majority_tags(taggings), guess)]
    for judge, part in sorted(taggings.groupby("judge"), key=lambda item: str(item[0])):
        rows.append(_row(judge, part, guess))
    return pd.DataFrame([row for row in rows if row], columns=COLUMNS)


def _row(name, reference: pd.DataFrame, guess: pd.DataFrame):
    reference = reference[reference["pair_id"].isin(guess.index)]
    truth, guesses = [], []
    for _, row in reference.iterrows():
        predicted = guess.loc[row["pair_id"]]
        for side in SIDES:
            if len(predicted[f"{side}_tags"]) == len(row[f"{side}_tags"]):
                truth.append(list(row[f"{side}_tags"]))
                guesses.append(list(predicted[f"{side}_tags"]))
    if not truth:
        return None
    return {"against": name, "n_pairs": len(reference), **sequence_agreement(truth, guesses)}
