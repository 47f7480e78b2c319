"""The analysis's steps run through the store and forked workers (`reports.analysis.report.Runner`).

A step is a module-level function of the analysis called with everything it reads as arguments
(parts of the analysis frame, the judgments, settings). `Memory.call` keys its result on the
function's name, the digests of its arguments and the code digest (`reports.machinery.store`),
as joblib.Memory does: nothing is listed by hand, and a step cannot read what its key leaves out.
A new judgment changes the label column, so the steps handed labels run again; the steps handed only
scores and gold labels (per metric: its sort, curves, score summaries) are reused, and a new metric's
scores leave the other metrics' steps alone. A hit is the result the step would compute: the digest
is of the values themselves, not of a count or a date.

Without a store (the `report` command) every step is computed, and `Memory.map` computes independent
groups of steps in forked processes (`reports.machinery.workers.run_forked`).
"""

import inspect

from reports.machinery.digests import Digests
from reports.machinery.workers import run_forked


class Memory:
    """Runs report steps, reusing stored results; `computed` and `reused` name the steps of this run."""

    def __init__(self, store=None, workers: int = 0):
        self.store, self.workers = store, workers
        self.digests = Digests()
        self.computed: list[str] = []
        self.reused: list[str] = []

    @property
    def reuses(self) -> bool:
        """Whether a step's result may come from the store (`reports.analysis.report.Runner`)."""
        return self.store is not None

    def call(self, function, /, *args, **kwargs):
        """`function(*args, **kwargs)`, or its stored result when it ran before on arguments with the same digests.

        The arguments are digested only when there is a store (digesting 400,000-row columns costs
        time a cold run saves).
        """
        name = step_name(function)
        if self.store is None:
            self.computed.append(name)
            return function(*args, **kwargs)
        called = f"{function.__module__}.{function.__qualname__}"
        key = self.store.key("step", called, self.digests.of(list(args)), self.digests.of(dict(sorted(kwargs.items()))))
        found = self.store.get(key)
        if found is not None:
            self.reused.append(name)
            return found[0]
        result = function(*args, **kwargs)
        self.store.set(key, (result,))
        self.computed.append(name)
        return result

    def map(self, calls) -> list:
        """`[call() for call in calls]`: in forked processes without a store (a child's store would be the parent's)."""
        return run_forked(calls, self.workers if self.store is None else 0)


def step_name(function) -> str:
    """The name of a step: a function of a module, so that its key (its name, arguments and code) covers
    all it reads; a lambda, a closure or a bound method could read what the key leaves out."""
    qualname = getattr(function, "__qualname__", "")
    bound = getattr(function, "__self__", None)
    if not qualname or "<" in qualname or not (bound is None or inspect.ismodule(bound)):
        raise TypeError(f"{function!r} is not a step: a step is a module-level function of its arguments")
    return function.__name__
