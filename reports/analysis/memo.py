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
    """A digest of a Series, DataFrame, array or plain value: equal digests, equal values (and dtypes, index).

    The bytes hashed determine the values exactly (numbers as stored, strings as their lengths and
    text), so two digests are equal only for equal values; equal values may still, rarely, differ in
    digest (0.0 and -0.0, a RangeIndex and the same labels listed), which only costs a recomputation.
    """
    hasher = hashlib.blake2b(digest_size=16)
    if isinstance(value, pd.DataFrame):
        hasher.update(repr(("DataFrame", list(value.columns), _dtypes(value))).encode())
        _hash_index(hasher, value.index)
        for i in range(value.shape[1]):
            _hash_values(hasher, value.iloc[:, i].array)
    elif isinstance(value, pd.Series):
        hasher.update(repr(("Series", value.name, str(value.dtype))).encode())
        _hash_index(hasher, value.index)
        _hash_values(hasher, value.array)
    elif isinstance(value, np.ndarray):
        hasher.update(repr((value.dtype.str, value.shape)).encode())
        hasher.update(np.ascontiguousarray(value).tobytes() if value.dtype != object else pickle.dumps(value))
    else:
        hasher.update(repr(value).encode())
    return hasher.hexdigest()


def _hash_index(hasher, index):
    if isinstance(index, pd.RangeIndex):
        hasher.update(repr(("range", index.start, index.stop, index.step, index.name)).encode())
    else:
        hasher.update(repr(("index", str(index.dtype), index.names)).encode())
        _hash_values(hasher, index.array)


def _hash_values(hasher, array):
    """Hash what determines `array`'s values: raw bytes of numbers, or lengths and text of strings.

    Masked arrays (Int64, boolean) add their mask; categoricals their codes and categories;
    anything else goes through pandas' own (slower) element hash.
    """
    hasher.update(repr((type(array).__name__, str(array.dtype), len(array))).encode())
    if isinstance(array, pd.Categorical):
        hasher.update(array.codes.tobytes())
        _hash_values(hasher, array.categories.array)
    elif isinstance(array, pd.arrays.IntegerArray | pd.arrays.BooleanArray | pd.arrays.FloatingArray):
        data, mask = array._data, array._mask  # noqa: SLF001 - pandas' masked arrays: values and mask
        hasher.update(np.where(mask, 0, data).tobytes())
        hasher.update(mask.tobytes())
    elif _numpy_kind(array) in tuple("biufcmM"):  # numbers, times: their bytes
        hasher.update(np.ascontiguousarray(np.asarray(array)).tobytes())
    elif not _hash_strings(hasher, np.asarray(array, dtype=object)):
        hasher.update(pd.util.hash_array(np.asarray(array, dtype=object)).tobytes())


# None, pandas' NA and NaN are all missing, but a step may tell them apart: each is hashed as itself.
MISSING_KINDS = {type(None): 0, type(pd.NA): 1, float: 2, np.float64: 3}


def _missing_kinds(gaps) -> np.ndarray:
    """Each missing value's code in MISSING_KINDS (-1: another kind); all None, the usual case, without a loop."""
    if np.equal(gaps, None).all():
        return np.zeros(len(gaps), dtype=np.int8)
    return np.fromiter((MISSING_KINDS.get(type(gap), -1) for gap in gaps), dtype=np.int8, count=len(gaps))


def _numpy_kind(array) -> str:
    """The kind of the numpy array holding `array`'s values ("f" for float64...), "" for any other array."""
    if isinstance(array, np.ndarray):
        return array.dtype.kind
    dtype = getattr(array.dtype, "numpy_dtype", None)  # NumpyExtensionArray's dtype wraps a numpy dtype
    return dtype.kind if isinstance(array, pd.arrays.NumpyExtensionArray) and isinstance(dtype, np.dtype) else ""


def _hash_strings(hasher, values) -> bool:
    """Strings and missing values (None, NaN, NA) as their gaps and text; False if any value is neither.

    The texts are joined with NUL, which none of them holds (checked: else their lengths are hashed too),
    so the joined text splits back into exactly those strings.
    """
    missing = pd.isna(values)
    texts = values[~missing]
    try:
        joined = "\x00".join(texts)
    except TypeError:  # not all strings
        return False
    kinds = _missing_kinds(values[missing])
    if (kinds < 0).any():
        return False
    hasher.update(missing.tobytes())
    hasher.update(kinds.tobytes())
    if joined.count("\x00") != max(len(texts) - 1, 0):
        hasher.update(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)).tobytes())
    hasher.update(joined.encode("utf-8", "surrogatepass"))
    return True


def _identity(column: pd.Series) -> tuple | None:
    """What makes two Series hold the same values without reading them: the address, layout and type of
    their numpy values (numbers, or pointers to immutable strings), their name, dtype and RangeIndex.
    None when that cannot be told (another kind of array or index). Nothing writes into a column in
    place (pandas' copy-on-write), so the same memory holds the same values."""
    values = getattr(column.array, "_ndarray", None)  # NumpyExtensionArray and StringArray keep one
    if not isinstance(values, np.ndarray) or values.ndim != 1 or not isinstance(column.index, pd.RangeIndex):
        return None
    index = column.index
    layout = (values.__array_interface__["data"][0], values.strides, len(values), values.dtype.str)
    return (*layout, type(column.array).__name__, str(column.dtype), column.name, index.start, index.stop, index.step)


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
        self._known: dict[tuple, tuple[str, object]] = {}

    def know(self, column: pd.Series, found: str):
        """`found`, the digest of `column` computed earlier (kept with it in the store): a column that holds
        the very same memory later on (the analysis frame's, after a shallow copy or a join) takes it
        without being hashed again. The column is kept referenced, so its memory is never reused meanwhile."""
        identity = _identity(column)
        if identity is not None:
            self._known[identity] = (found, column)

    def column(self, frame: pd.DataFrame, name: str) -> str:
        """The digest of one column of a frame, computed once per frame and column in this run."""
        key = (id(frame), name)
        if key not in self._digests:
            known = self._known.get(_identity(frame[name]))
            self._digests[key] = known[0] if known else digest(frame[name])
        return self._digests[key]

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
