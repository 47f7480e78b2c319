"""Digests of what a cached result is computed from: values (`digest`), the code (`code_digest`).

`digest` hashes the values themselves (numbers as stored, strings as their lengths and text), so
two digests are equal only for equal values, in any process. `code_digest` hashes the source of
every first-party package, as joblib.Memory keys on a function's code: a change to any code a
report runs never reuses a result the old code computed, and nobody lists modules or bumps a
version by hand. `settings_digest` does the same for the settings that change a report's content. `Digests`
digests a run's arguments, each column once.
"""

import hashlib
import pickle
import re
from functools import cache
from importlib.util import find_spec
from pathlib import Path

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
    their numpy values (numbers, or pointers to immutable strings; a masked array's values and mask) or
    Arrow buffers, their name, dtype and RangeIndex. None when that cannot be told (another kind of array or
    index). Nothing writes into a column in place (pandas' copy-on-write), so the same memory holds the same
    values."""
    array = column.array
    if not isinstance(column.index, pd.RangeIndex):
        return None
    index = column.index
    where = (type(array).__name__, str(column.dtype), column.name, index.start, index.stop, index.step)
    if isinstance(array, pd.arrays.ArrowExtensionArray):
        # Arrow arrays (pandas' default strings once pyarrow is installed) are immutable: the same buffers, offset
        # and length hold the same values.
        chunks = array._pa_array.chunks  # noqa: SLF001 - the pyarrow ChunkedArray behind the column
        layout = tuple(
            (chunk.offset, len(chunk), tuple(None if b is None else (b.address, b.size) for b in chunk.buffers()))
            for chunk in chunks
        )
        return (layout, *where)
    if isinstance(array, pd.arrays.IntegerArray | pd.arrays.BooleanArray | pd.arrays.FloatingArray):
        buffers = [array._data, array._mask]  # noqa: SLF001 - pandas' masked arrays: values and mask
    elif isinstance(array, pd.arrays.NumpyExtensionArray | pd.arrays.StringArray):
        buffers = [array._ndarray]  # noqa: SLF001 - their values (a categorical's codes would leave out its categories)
    else:
        return None
    if not all(isinstance(values, np.ndarray) and values.ndim == 1 for values in buffers):
        return None
    layout = tuple(
        (values.__array_interface__["data"][0], values.strides, len(values), values.dtype.str) for values in buffers
    )
    return (layout, *where)


# What is not code a deployed report runs: the test suite and the benchmarks (the same checkout holds them).
NOT_RUN = ("tests", "bench")
# How code reads a setting that changes what it computes (`report_setting`): each one found so is in every key.
REPORT_SETTING = re.compile(r"""report_setting\(\s*["']([A-Z][A-Z0-9_]*)["']""")


def first_party_packages(root: Path) -> list[str]:
    """Every package of the project (a folder with `__init__.py` at its root), but `NOT_RUN`: what the analysis
    imports, directly or through a registry's dotted path (task types, metrics, report sections), is among them,
    so no module it runs can change unseen (a hand list of packages left out `annotation.scale`, once)."""
    return sorted(p.name for p in root.iterdir() if (p / "__init__.py").is_file() and p.name not in NOT_RUN)


def _source_files(dotted: str) -> list[Path]:
    spec = find_spec(dotted)
    origin = Path(spec.origin)
    if spec.submodule_search_locations is None:
        return [origin]
    return sorted(origin.parent.rglob("*.py"))


def project_root() -> Path:
    return Path(find_spec("reports").origin).parent.parent


def code_files(root: Path | None = None) -> list[Path]:
    """The source files `code_digest` hashes: every `.py` file of every first-party package."""
    root = root or project_root()
    return sorted(path for package in first_party_packages(root) for path in (root / package).rglob("*.py"))


@cache
def code_digest(root: Path | None = None) -> str:
    """The digest of the project's code (file names and bytes, `code_files`), computed once per process."""
    root = root or project_root()
    hasher = hashlib.blake2b(digest_size=8)
    for path in code_files(root):
        hasher.update(str(path.relative_to(root)).encode() + b"\0")
        hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()


@cache
def report_settings(root: Path | None = None) -> tuple[str, ...]:
    """The settings the code reads through `report_setting` (found in its source, `code_files`)."""
    names = {name for path in code_files(root) for name in REPORT_SETTING.findall(path.read_text(encoding="utf-8"))}
    return tuple(sorted(names))


def report_setting(name: str):
    """A setting that changes what a report computes: read through here, it is in every key (`settings_digest`)."""
    from django.conf import settings

    return getattr(settings, name)


def settings_digest() -> str:
    """The digest of the values of `report_settings` now (a test's override included)."""
    return digest(repr([(name, report_setting(name)) for name in report_settings()]))


class Digests:
    """The digests of one run's arguments, each column hashed once however many steps read it.

    A DataFrame's digest is made of its columns' digests (`digest` of each), so the parts of one frame
    that steps are handed share the work; `know` gives a column's digest computed earlier (kept in the
    store with the pairs), which a column holding the very same memory then takes without being hashed.
    """

    def __init__(self):
        self._known: dict[tuple, tuple[str, object]] = {}

    def know(self, column: pd.Series, found: str):
        """`found`, the digest of `column` computed earlier: a column holding the very same memory later on
        (a step's part, after a shallow copy or a join) takes it. The column is kept referenced, so its
        memory is never reused meanwhile."""
        identity = _identity(column)
        if identity is not None:
            self._known[identity] = (found, column)

    def of(self, value) -> str:
        """The digest of an argument: frames column by column, containers item by item, anything else whole."""
        if isinstance(value, pd.DataFrame):
            columns = [self.column(value.iloc[:, i]) for i in range(value.shape[1])]
            return digest(repr(("DataFrame", list(value.columns), _dtypes(value), _index_digest(value.index), columns)))
        if isinstance(value, pd.Series):
            return self.column(value)
        if isinstance(value, dict):
            return digest(repr(("dict", [(self.of(key), self.of(item)) for key, item in value.items()])))
        if isinstance(value, list | tuple):
            return digest(repr((type(value).__name__, [self.of(item) for item in value])))
        return digest(value)

    def column(self, column: pd.Series) -> str:
        identity = _identity(column)
        known = self._known.get(identity) if identity is not None else None
        if known is None:
            known = (digest(column), column)
            if identity is not None:
                self._known[identity] = known
        return known[0]


def _index_digest(index) -> str:
    hasher = hashlib.blake2b(digest_size=16)
    _hash_index(hasher, index)
    return hasher.hexdigest()


def _dtypes(value):
    return str(value.dtype) if isinstance(value, pd.Series) else [str(t) for t in value.dtypes]
