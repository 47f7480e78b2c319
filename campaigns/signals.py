"""Signals other apps listen to without campaigns knowing about them."""

from django.dispatch import Signal

# Sent inside the transaction that created the pairs, with `campaign` and
# `pair_pks`; receivers that start background work should defer it with
# transaction.on_commit so it never sees uncommitted rows.
pairs_created = Signal()
