"""A report's steps reused across states of the data: each result kept under a digest of what it reads.

A step is a pure function of some columns of the analysis frame, the judgments and settings.
`Memo.step` digests those inputs (values, dtype, index and name) and returns the stored
result when a step with the very same inputs ran before, else computes and stores it. A new
judgment changes the label column, so the steps that read labels run again; the steps that
read only scores and gold labels (per metric: its sort, curves, score summaries) are reused,
and a new metric's scores leave the other metrics' steps alone. A hit is the result the step
would compute: the digest is of the values themselves, not of a count or a date.

The store is anything with `get(key)` and `set(key, value)` (the configured Django cache, so
results survive a worker restart); without one every step is computed (the `report` command).
"""

import hashlib
import pickle

import numpy as np
import pandas as pd


def digest(value) -> str:
    """A digest of a Series, DataFrame, array or plain value: equal digests, equal values (and dtypes, index)."""
    hasher = hashlib.blake2b(digest_size=16)
    if isinstance(value, pd.Series | pd.DataFrame):
        hasher.update(repr((type(value).__name__, getattr(value, "name", None), _dtypes(value))).encode())
        hasher.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
        if isinstance(value, pd.DataFrame):
            hasher.update(repr(list(value.columns)).encode())
    elif isinstance(value, np.ndarray):
        hasher.update(repr((value.dtype.str, value.shape)).encode())
        hasher.update(np.ascontiguousarray(value).tobytes() if value.dtype != object else pickle.dumps(value))
    else:
        hasher.update(repr(value).encode())
    return hasher.hexdigest()


def _dtypes(value):
    return str(value.dtype) if isinstance(value, pd.Series) else [str(t) for t in value.dtypes]


class Memo:
    """Runs report steps, reusing stored results; `computed` and `reused` name the steps of this run."""

    def __init__(self, store=None, namespace="parasol-step"):
        self.store = store
        self.namespace = namespace
        self.computed: list[str] = []
        self.reused: list[str] = []
        self._digests: dict[tuple[int, str | None], str] = {}

    def column(self, frame: pd.DataFrame, name: str) -> str:
        """The digest of one column of a frame, computed once per frame and column in this run."""
        return self._once((id(frame), name), lambda: frame[name])

    def value(self, value) -> str:
        """The digest of a value read by several steps (the judgments), computed once in this run."""
        return self._once((id(value), None), lambda: value)

    def _once(self, key, read) -> str:
        if key not in self._digests:
            self._digests[key] = digest(read())
        return self._digests[key]

    def step(self, name: str, inputs: dict, compute):
        """`compute()`, or its stored result when a step `name` ran before on inputs with the same digests.

        `inputs()`: what the step reads, each a digest (str, e.g. from `column`) or a value to digest;
        called only when there is a store (digesting 400,000-row columns costs time a cold run saves).
        """
        if self.store is None:
            self.computed.append(name)
            return compute()
        parts = sorted((key, value if isinstance(value, str) else digest(value)) for key, value in inputs().items())
        key = f"{self.namespace}:{name}:{digest(repr(parts))}"
        found = self.store.get(key)
        if found is not None:
            self.reused.append(name)
            return found[0]
        result = compute()
        self.store.set(key, (result,))
        self.computed.append(name)
        return result
