"""ParaTag's collection loop (section 4.3) in the report: one row per round (pure pandas, no Django)."""

import numpy as np
import pandas as pd

ROUND_KEYS = ("collection_round", "detector", "detector_train_pairs", "detector_f1")  # each pair's metadata
ROUND_COLUMNS = [
    "round", "detector", "detector_train_pairs", "detector_f1", "candidates", "selected", "selected_share",
    "sent", "judged_selected", "paraphrase_rate_selected",
]  # fmt: skip


def rounds_table(frame) -> pd.DataFrame:
    """Per round: the detector that filtered it (training pairs, held-out span F1), how many candidates it
    selected, how many went to judges, and the judges' paraphrase rate of the selected ones judged so far.

    `frame`: collection_round, detector, detector_train_pairs, detector_f1, selected, sent_to_judges, paraphrase.
    """
    if "collection_round" not in frame or not frame["collection_round"].notna().any():
        return pd.DataFrame(columns=ROUND_COLUMNS)
    rows = []
    in_rounds = frame[frame["collection_round"].notna()]
    for number, part in in_rounds.groupby(in_rounds["collection_round"].astype(int), sort=True):
        selected = part["selected"].fillna(False).astype(bool).to_numpy()
        sent = part["sent_to_judges"].fillna(False).astype(bool).to_numpy()
        labels = part["paraphrase"].to_numpy(float)[selected]
        judged = labels[~np.isnan(labels)]
        first = part.iloc[0]
        rows.append(
            {
                "round": number,
                "detector": first["detector"],
                "detector_train_pairs": first["detector_train_pairs"],
                "detector_f1": first["detector_f1"],
                "candidates": len(part),
                "selected": int(selected.sum()),
                "selected_share": float(selected.mean()),
                "sent": int(sent.sum()),
                "judged_selected": len(judged),
                "paraphrase_rate_selected": float(judged.mean()) if len(judged) else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=ROUND_COLUMNS)
