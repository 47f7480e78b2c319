"""A digest of the source of the code that computes what reports cache, as joblib.Memory keys on a function's code.

Every cached result (pairs, score columns, steps, reports, figures, PEM's tables) is keyed on it, so
a change to that code never reuses a result the old code computed, and nobody bumps a version by hand.
"""

import hashlib
from functools import cache
from importlib.util import find_spec
from pathlib import Path

# The packages and modules a cached result is computed by: the reports app (analysis, frames, figures,
# task sections), and what it reads the database and the task types through.
CODE = (
    "reports",
    "scoring.service",
    "scoring.metrics.base",
    "scoring.metrics.registry",
    "annotation.tagging",
    "annotation.tasktypes",
    "campaigns.models",
    "parasol.db",
)


def _source_files(dotted: str) -> list[Path]:
    spec = find_spec(dotted)
    origin = Path(spec.origin)
    if spec.submodule_search_locations is None:
        return [origin]
    return sorted(path for path in origin.parent.rglob("*.py") if "migrations" not in path.parts)


@cache
def code_digest() -> str:
    """The digest of the source of CODE (file names and bytes), computed once per process."""
    hasher = hashlib.blake2b(digest_size=8)
    root = Path(find_spec("reports").origin).parent.parent
    for dotted in CODE:
        for path in _source_files(dotted):
            hasher.update(str(path.relative_to(root)).encode() + b"\0")
            hasher.update(path.read_bytes() + b"\0")
    return hasher.hexdigest()
