"""A toy task type and a toy metric, each added as its guide says and registered by a fixture for one test.

The generic tests (the judge's walk in Chromium, training and its feedback, the report page, its LaTeX and
exports, the registries' contracts) run for every registered task type and metric, and for these toys too:
a test that needs an edit for a new type or metric fails here first. The toy type asks one yes/no question
(is the hypothesis fluent English?) and gives no training feedback, which the contract calls optional; the
toy metric scores the ratio of the two sentences' lengths and is not opt-in, so it joins every campaign.
"""

from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest
from django import forms
from django.core.cache import cache
from django.test import override_settings

from annotation.tasktypes.base import AnswerForm, TaskType
from annotation.votes import Vote
from campaigns.task_types import task_type_names
from metrics import registry as metric_registry
from metrics.registry import HIGHER, Entry
from reports.analysis.present import Table
from reports.frames import counted_judgments
from reports.task_sections.base import ESTIMATES, LABEL_SECTIONS, SYSTEMS, Section, TaskSection

HERE = Path(__file__).resolve().parent
TOY_TASK_TYPE = "toy-fluency"
TOY_METRIC = "toy_length_ratio"
TOY_TEMPLATES = HERE / "toy_templates"


class FluencyAnswerForm(AnswerForm):
    fluent = forms.TypedChoiceField(choices=[(1, "Yes"), (0, "No")], coerce=int)


class Fluency(TaskType):
    name = TOY_TASK_TYPE
    title = "Fluency (yes or no)"
    introduction = "You will read sentences and say whether each one reads as fluent English."
    default_answer_seconds = 5
    judge_template = "toy/_fluency.html"
    guidelines_template = "toy/_fluency_guidelines.html"
    training_file = HERE / "toy_training_pairs.jsonl"
    answer_form = FluencyAnswerForm
    invalid_answer_message = "Answer yes or no."
    pair_columns = ["n_judgments", "fluent_share"]
    # The yes/no answer is the binary label the report compares the metrics with: yes votes 1, no votes 0.
    vote = Vote(key="fluent", paraphrase={1: 1, 0: 0})
    report_section = f"{__name__}.FLUENCY_REPORT"

    def answer(self, cleaned_data):
        return {"fluent": cleaned_data["fluent"]}

    def aggregate(self, judgments, pair_pks):
        fluent = pd.DataFrame(
            {"pair_pk": judgments["pair_pk"], "fluent": [v.get("fluent") for v in judgments["values"]]}
            if len(judgments)
            else {"pair_pk": [], "fluent": []}
        )
        by_pair = fluent.groupby("pair_pk")["fluent"]
        index = pd.Index(pair_pks)
        return pd.DataFrame(
            {
                "n_judgments": by_pair.size().reindex(index, fill_value=0).astype("int64"),
                "fluent_share": by_pair.mean().reindex(index),
            },
            index=index,
        )


def fluency_tables(campaigns):
    fluent = [values.get("fluent") for values in counted_judgments(campaigns, values=True)["values"]]
    return {"toy_fluency": pd.DataFrame({"n_answers": [len(fluent)], "fluent_share": [pd.Series(fluent).mean()]})}


def _no_answers(report):
    return None if report.tables["toy_fluency"]["n_answers"].iloc[0] else "No answers yet: toy fluency waits for them."


FLUENCY_REPORT = TaskSection(
    sections=(
        Section("fluency", "Fluency", ("toy_fluency",), _no_answers),
        *LABEL_SECTIONS,
        SYSTEMS.with_tables("systems"),
        ESTIMATES,
    ),
    declared=(
        Table(
            "toy_fluency",
            "Share of answers calling the hypothesis fluent",
            # The page and LaTeX print the reader's words; the CSV keeps the names.
            column_titles=(("n_answers", "Answers"), ("fluent_share", "Share called fluent")),
            section="toy_fluency",
        ),
    ),
    tables=fluency_tables,
)

# Its class is in `tests.toy_metric`, imported on first use like every metric's (its name must be registered first).
TOY_METRIC_ENTRY = Entry("tests.toy_metric.ToyLengthRatio", HIGHER, "Toy length ratio")

# What the generic tests run over: the registries as they are, and the toys.
EVERY_TASK_TYPE = [*task_type_names(), TOY_TASK_TYPE]
EVERY_METRIC = [*metric_registry.METRICS, TOY_METRIC]
every_task_type = pytest.mark.parametrize("task_type", EVERY_TASK_TYPE, indirect=True)


@contextmanager
def registered_toy_task_type():
    """The toy registered as the guide says (one entry of TASK_TYPES) and its templates on the template path,
    until the block ends."""
    from django.conf import settings

    templates = [{**settings.TEMPLATES[0], "DIRS": [TOY_TEMPLATES, *settings.TEMPLATES[0]["DIRS"]]}]
    task_types = {**settings.TASK_TYPES, TOY_TASK_TYPE: f"{__name__}.Fluency"}
    try:
        with override_settings(TEMPLATES=templates, TASK_TYPES=task_types):
            forget_cached()
            yield TOY_TASK_TYPE
    finally:
        forget_cached()


@contextmanager
def registered_toy_metric():
    """The toy in the metric registry, scored by default as a registered metric that is not opt-in is."""
    from django.conf import settings

    try:
        with (
            override_settings(PARASOL_METRICS=[*settings.PARASOL_METRICS, TOY_METRIC]),
            pytest.MonkeyPatch.context() as patch,
        ):
            patch.setitem(metric_registry.METRICS, TOY_METRIC, TOY_METRIC_ENTRY)
            forget_cached()
            yield TOY_METRIC
    finally:
        forget_cached()


def forget_cached():
    """Clear the reports a process caches: the task types and their report sections are looked up by name
    each time (`campaigns.task_types`), so a registry that changes leaves nothing stale there."""
    cache.clear()


@pytest.fixture
def toy_task_type():
    """The toy task type, registered for one test, then gone."""
    with registered_toy_task_type() as name:
        yield name


@pytest.fixture
def toy_metric():
    """The toy metric, registered for one test, then gone."""
    with registered_toy_metric() as name:
        yield name
