"""The metric base class, its error type and the one helper that reads settings.

A metric is constructed with its settings (keyword arguments, falling back to
environment variables through :func:`setting`) and scores parallel lists of
sources and hypotheses through :meth:`Metric.score`. Subclasses implement one of
two hooks: ``_score_pair`` (one pair at a time) or ``_score_batch`` (all pairs).
"""

import os
from collections.abc import Sequence
from typing import ClassVar

from scoring.metrics.registry import HIGHER, LOWER, direction_of

__all__ = ["HIGHER", "LOWER", "Metric", "MetricUnavailable", "format_signature", "setting"]


class MetricUnavailable(RuntimeError):
    """A metric cannot run here: a model, a corpus or a setting is missing.

    The message names the setting to change or the setup command to run.
    """


def setting(name, default=None, *, choices=None, value=None):
    """Return ``value`` when given, else environment variable ``name``, else ``default``.

    An empty variable counts as unset. With ``choices``, any other value raises
    ``ValueError`` naming the variable, so a typo fails at construction time.
    """
    if value is None:
        raw = os.environ.get(name, "")
        value = raw.strip() if raw.strip() else default
    if choices is not None and value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def format_signature(signature):
    """One line for a signature dict, in sacrebleu's ``key:value|key:value`` style."""
    return "|".join(f"{key}:{value}" for key, value in signature.items())


class Metric:
    """Score hypotheses against their sources; see the metric cards in README.md."""

    name: ClassVar[str]
    direction: ClassVar[str]  # HIGHER or LOWER, read from the registry
    # Bump when a change to the code can change a score: stored scores carry it.
    version: ClassVar[str] = "1"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # The registry states each metric's direction; a class naming itself takes it from there.
        if "name" in cls.__dict__:
            cls.direction = direction_of(cls.name)

    def score(self, *, sources: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """One score per (source, hypothesis) pair, in input order."""
        sources, hypotheses = list(sources), list(hypotheses)
        if len(sources) != len(hypotheses):
            raise ValueError(f"{len(sources)} sources but {len(hypotheses)} hypotheses")
        for text in (*sources, *hypotheses):
            if not isinstance(text, str):
                raise TypeError(f"sources and hypotheses must be strings, got {type(text).__name__}")
        if not sources:
            return []
        scores = self._score_batch(sources, hypotheses)
        return [float(value) for value in scores]

    def signature(self) -> dict[str, str]:
        """What identifies this metric's scores: never mix scores whose signatures differ."""
        return {"metric": self.name, "version": self.version, **self._signature_fields()}

    def signature_string(self) -> str:
        return format_signature(self.signature())

    # Hooks for subclasses.

    def _score_batch(self, sources, hypotheses):
        return [self._score_pair(source, hypothesis) for source, hypothesis in zip(sources, hypotheses)]

    def _score_pair(self, source, hypothesis):
        raise NotImplementedError(f"{type(self).__name__} implements neither _score_pair nor _score_batch")

    def _signature_fields(self) -> dict[str, str]:
        return {}

    def __repr__(self):
        return f"<{type(self).__name__} {self.signature_string()}>"
