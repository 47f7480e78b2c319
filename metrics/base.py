"""The metric base class, its error type and the one helper that reads settings.

A metric is constructed with its settings (keyword arguments, falling back to
environment variables through :func:`setting`) and scores parallel lists of
sources and hypotheses through :meth:`Metric.score`. Subclasses implement one of
two hooks: ``_score_pair`` (one pair at a time) or ``_score_batch`` (all pairs).
"""

import os
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from metrics.registry import HIGHER, LOWER, direction_of, natural_threshold_of
from metrics.untrusted import UntrustedAnswer, clean_json, finite

__all__ = [
    "HIGHER",
    "LOWER",
    "Metric",
    "MetricUnavailable",
    "PairFailed",
    "ScoresFailed",
    "called_paraphrase",
    "format_signature",
    "parse_signature",
    "setting",
]


def called_paraphrase(scores, threshold, direction):
    """The one decision rule: a score at least as close as ``threshold`` is called a paraphrase.

    The paper (5.2) labels couples "with a score under a given threshold" non-paraphrases
    "whereas others are labeled paraphrases": so ``score >= threshold`` (``<=`` for a
    distance), and a ParaPLUIE score of exactly 0 is a paraphrase. Works on arrays.
    """
    scores = np.asarray(scores, dtype=float)
    if direction == HIGHER:
        return scores >= threshold
    if direction == LOWER:
        return scores <= threshold
    raise ValueError(f"direction must be {HIGHER!r} or {LOWER!r}, got {direction!r}")


class MetricUnavailable(RuntimeError):
    """A metric cannot run here: a model, a corpus or a setting is missing.

    The message names the setting to change or the setup command to run.
    """


class PairFailed(ValueError):
    """One pair cannot be scored (a server refused it or gave an unusable answer, a score is not finite).

    A hook raises it (or returns it in place of a score) for that pair only: the other pairs
    of the batch are scored, and the message says why, for the campaign's page.
    """


class ScoresFailed(ValueError):
    """Some pairs of a ``score`` call could not be scored; ``failures`` maps their indexes to why."""

    def __init__(self, failures):
        self.failures = failures
        first = min(failures)
        super().__init__(f"{len(failures)} pair(s) could not be scored; pair {first}: {failures[first]}")


# The longest text kept from a metric's per-pair details (an LLM's replies); the rest is cut, marked.
DETAIL_TEXT_CHARS = 20_000


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


def parse_signature(line):
    """The dict :func:`format_signature` wrote (a value may itself hold ':')."""
    return dict(field.partition(":")[::2] for field in line.split("|") if field)


class Metric:
    """Score hypotheses against their sources; see the metric cards in README.md."""

    name: ClassVar[str]
    direction: ClassVar[str]  # HIGHER or LOWER, read from the registry
    # The paper's threshold between paraphrase and not (ParaPLUIE: 0), or None; read from the registry.
    natural_threshold: ClassVar[float | None] = None
    # Bump when a change to the code can change a score: stored scores carry it.
    version: ClassVar[str] = "1"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # The registry states each metric's direction and threshold; a class naming itself takes them from there.
        if "name" in cls.__dict__:
            cls.direction = direction_of(cls.name)
            cls.natural_threshold = natural_threshold_of(cls.name)

    def score(self, *, sources: Sequence[str], hypotheses: Sequence[str]) -> list[float]:
        """One score per (source, hypothesis) pair, in input order."""
        return self.score_with_details(sources=sources, hypotheses=hypotheses)[0]

    def score_with_details(self, *, sources: Sequence[str], hypotheses: Sequence[str]):
        """(scores, details): details is one JSON-able dict per pair for inspection, or None for most metrics.

        ScoresFailed if any pair could not be scored (`score_each` scores the others all the same)."""
        scores, details, failures = self.score_each(sources=sources, hypotheses=hypotheses)
        if failures:
            raise ScoresFailed(failures)
        return scores, details

    def score_each(self, *, sources: Sequence[str], hypotheses: Sequence[str]):
        """(scores, details, failures): the one checked way out of every metric.

        Every score is a finite float, every detail JSON-able with clean text and finite numbers;
        a pair that fails (PairFailed, a non-finite score or detail) is None in ``scores`` and
        ``details`` and its index maps to why in ``failures``. A hook that raises PairFailed for a
        batch is run again pair by pair, so that only the pairs at fault fail.
        """
        sources, hypotheses = list(sources), list(hypotheses)
        if len(sources) != len(hypotheses):
            raise ValueError(f"{len(sources)} sources but {len(hypotheses)} hypotheses")
        for text in (*sources, *hypotheses):
            if not isinstance(text, str):
                raise TypeError(f"sources and hypotheses must be strings, got {type(text).__name__}")
        if not sources:
            return [], None, {}
        try:
            scores, details = self._score_batch_with_details(sources, hypotheses)
        except PairFailed as error:
            if len(sources) == 1:
                return [None], None, {0: str(error)}
            return self._score_one_by_one(sources, hypotheses)
        scores = list(scores)
        if len(scores) != len(sources) or (details is not None and len(details) != len(sources)):
            raise RuntimeError(f"{self.name} returned {len(scores)} scores for {len(sources)} pairs")
        return _checked(self.name, scores, details)

    def _score_one_by_one(self, sources, hypotheses):
        scores, details, failures = [], [], {}
        for index, (source, hypothesis) in enumerate(zip(sources, hypotheses)):
            score, detail, failure = self.score_each(sources=[source], hypotheses=[hypothesis])
            scores.append(score[0])
            details.append(detail[0] if detail else None)
            if failure:
                failures[index] = failure[0]
        return scores, (details if any(detail is not None for detail in details) else None), failures

    def signature(self) -> dict[str, str]:
        """What identifies this metric's scores: never mix scores whose signatures differ."""
        return {"metric": self.name, "version": self.version, **self._signature_fields()}

    def signature_string(self) -> str:
        return format_signature(self.signature())

    # Hooks for subclasses.

    def _score_batch_with_details(self, sources, hypotheses):
        """Override to keep per-pair evidence (an LLM's raw answers) beside the scores."""
        return self._score_batch(sources, hypotheses), None

    def _score_batch(self, sources, hypotheses):
        return [self._score_pair(source, hypothesis) for source, hypothesis in zip(sources, hypotheses)]

    def _score_pair(self, source, hypothesis):
        raise NotImplementedError(f"{type(self).__name__} implements neither _score_pair nor _score_batch")

    def _signature_fields(self) -> dict[str, str]:
        return {}

    def __repr__(self):
        return f"<{type(self).__name__} {self.signature_string()}>"


def _checked(name, scores, details):
    """`Metric.score_each`'s check: finite float scores, clean details; a pair that fails either is None."""
    failures = {}
    details = list(details) if details is not None else None
    for index, value in enumerate(scores):
        try:
            if isinstance(value, PairFailed):
                raise value
            scores[index] = finite(value, f"{name}'s score")
            if details is not None and details[index] is not None:
                details[index] = clean_json(details[index], DETAIL_TEXT_CHARS, f"{name}'s details")
        except (PairFailed, UntrustedAnswer) as error:
            failures[index] = str(error)
            scores[index] = None
            if details is not None:
                details[index] = None
    return scores, details, failures
