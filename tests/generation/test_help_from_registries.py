"""Every help text or form that lists templates, metrics, import formats or LLM backends is built from its
registry: nothing registered is ever missing (`paratag` was, from `generate --help`)."""

import pytest
from django.conf import settings
from django.core.management import load_command_class

from campaigns.forms import FORMAT_CHOICES
from campaigns.importers import FORMATS
from generation.forms import GenerationForm
from generation.llm import model_names
from generation.templates import BUILTIN_TEMPLATES
from metrics.registry import metric_names


def help_of(app, name):
    """The command's description and every argument's help and choices, as written (argparse's wrapping
    would split names at their hyphens)."""
    parser = load_command_class(app, name).create_parser("manage.py", name)
    parts = [parser.description or ""]
    for action in parser._actions:
        parts += [action.help or "", " ".join(map(str, action.choices or []))]
    return " ".join(parts)


def test_generate_help_lists_every_template_model_and_metric():
    text = help_of("generation", "generate")
    for name in [*BUILTIN_TEMPLATES, *model_names(), *metric_names()]:
        assert name in text, name


@pytest.mark.parametrize(("app", "name"), [("scoring", "score"), ("scoring", "score_file")])
def test_scoring_helps_list_every_metric_and_backend(app, name):
    text = help_of(app, name)
    for metric in metric_names():
        assert metric in text, metric
    for backend in settings.PARASOL_LLM_BACKENDS:
        assert backend in text, backend


def test_the_commands_and_form_offer_every_import_format():
    assert [name for name, _title in FORMAT_CHOICES] == list(FORMATS)
    text = help_of("scoring", "score_file")
    assert all(name in text for name in FORMATS)


def test_paratag_round_help_lists_models_and_prompts():
    text = help_of("reports", "paratag_round")
    assert all(name in text for name in model_names())
    assert "judged" in text and "one-example" in text and "rounds" in text and "judgments" in text


@pytest.mark.django_db
def test_the_generation_form_offers_every_template_and_metric(campaign):
    form = GenerationForm(campaign=campaign)
    assert [name for name, _ in form.fields["templates"].choices][: len(BUILTIN_TEMPLATES)] == list(BUILTIN_TEMPLATES)
    assert [name for name, _ in form.fields["selection_metric"].choices][1:] == metric_names()
