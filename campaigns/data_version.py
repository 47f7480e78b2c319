"""Bulk writes that count themselves in the reports' data version, for the apps that may not import reports.

On SQLite the data version's triggers run once per row; a scoring batch counts its scores once instead
(`reports.models.ScoreSeal`). Scoring, below reports, asks here; the reports app answers (it registers its
seal when Django starts, `reports.apps`). Without it the triggers count every row: never less exact.
"""

from contextlib import nullcontext

_sealers = {}


def provide_score_sealer(sealer):
    """Register `sealer(pair_pks)`, a context manager (the reports app does, once)."""
    _sealers["scores"] = sealer


def scores_counted_once(pair_pks):
    """Around a bulk insert of scores on `pair_pks`, inside its transaction."""
    sealer = _sealers.get("scores")
    return sealer(pair_pks) if sealer else nullcontext()
