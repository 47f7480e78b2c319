"""No task type's name in app code outside its two packages: a new type plugs in by declaring, not by a branch.

The names come from the registry, so a type added later is checked too. A task type's name
may appear only in `annotation/tasktypes/` (the types), `reports/task_sections/` (their
reports) and in its registration, the `TASK_TYPES` and `DEFAULT_TASK_TYPE` settings (their
own strings in `parasol/settings.py`, nothing else there). Read as strings: Python string
literals (docstrings aside: prose may name a type), and quoted strings in templates and
JavaScript (comments aside); a type's title (its display name) is looked for too. Out of scope:
migrations (they record history), tests (a test may name what it checks) and third-party code
(static/vendor, and the installed packages of a virtualenv inside the project). The default
type is read from its setting (`campaigns.task_types.default_task_type`), so no model default
or form names one. `EXEMPT` lists the strings that may stay, each with its reason.
"""

import ast
import re
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings

from campaigns.task_types import get_task_type, task_type_names

ROOT = Path(settings.BASE_DIR)
# Where the types are registered: there, the registration's own strings may name them.
REGISTRATION = "parasol/settings.py"
# The two packages that own the types' names.
OWNERS = (ROOT / "annotation" / "tasktypes", ROOT / "reports" / "task_sections")
SUFFIXES = (".py", ".html", ".js")
# (file, string): why it may name a type.
EXEMPT = {
    # The option of `export_pairs` writing the span taggings (JSON lines) of any campaign: a word
    # users type (docs/cli.md), not a branch on the campaign's type.
    ("reports/management/commands/export_pairs.py", "--spans"): "a documented command-line option",
}
QUOTED = re.compile(r"""'([^'\n]*)'|"([^"\n]*)\"""")
COMMENTS = {
    ".html": re.compile(r"\{#.*?#\}|<!--.*?-->|\{% comment %\}.*?\{% endcomment %\}", re.DOTALL),
    ".js": re.compile(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*", re.DOTALL),
}


def app_folders():
    """The project's own apps, its settings package, and the templates and static folders."""
    folders = [Path(config.path) for config in apps.get_app_configs() if own_code(Path(config.path))]
    return [*folders, ROOT / "parasol", ROOT / "templates", ROOT / "static"]


def own_code(path: Path) -> bool:
    # The virtualenv usually sits in the project (`make install` makes .venv): its apps (Django's admin,
    # DRF) are third-party code, whose strings would fail a type named like one of their words.
    return path.is_relative_to(ROOT) and "site-packages" not in path.parts


def in_scope(path: Path) -> bool:
    parts = path.relative_to(ROOT).parts
    return (
        path.suffix in SUFFIXES
        and "migrations" not in parts
        and "vendor" not in parts  # third-party code (htmx)
        and not any(path.is_relative_to(owner) for owner in OWNERS)
    )


def python_strings(text):
    """The string literals of a module, docstrings left out."""
    tree = ast.parse(text)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def quoted_strings(text, suffix):
    """The quoted strings of a template or a script, comments left out (line numbers kept)."""
    text = COMMENTS[suffix].sub(lambda match: "\n" * match.group().count("\n"), text)
    return [
        (text.count("\n", 0, match.start()) + 1, next(group for group in match.groups() if group is not None))
        for match in QUOTED.finditer(text)
    ]


def strings_of(path: Path):
    text = path.read_text(encoding="utf-8")
    return python_strings(text) if path.suffix == ".py" else quoted_strings(text, path.suffix)


def naming(names, titles=()):
    """A pattern finding a name as a whole word of a string (not inside `criteria_tables` or `similarity+spans`),
    or a title anywhere in it."""
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    pattern = rf"(?<![\w+])(?:{alternatives})(?![\w+])"
    return re.compile("|".join([pattern, *(re.escape(str(title)) for title in titles)]))


def exempt(where, value):
    """Whether a string may name a type: listed in `EXEMPT`, or one of the registration's own strings (each
    name, its class's dotted path, the default's name) in the registration's file."""
    registration = {*settings.TASK_TYPES, *settings.TASK_TYPES.values(), settings.DEFAULT_TASK_TYPE}
    return (where, value) in EXEMPT or (where == REGISTRATION and value in registration)


def names_outside_the_packages():
    names = task_type_names()
    pattern = naming(names, [get_task_type(name).title for name in names])
    found = []
    for folder in app_folders():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and in_scope(path):
                where = str(path.relative_to(ROOT))
                found += [
                    f"{where}:{line}: {value!r}"
                    for line, value in strings_of(path)
                    if pattern.search(value) and not exempt(where, value)
                ]
    return found


def test_no_task_type_name_appears_in_app_code_outside_its_packages():
    assert names_outside_the_packages() == []


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("similarity", True),
        ("Task type: Similarity (5-way)", True),
        ("#item .criteria", True),
        ("similarity+spans", True),
        ("parasol-criteria:1", True),
        ("criteria_tables", False),
        ("criterion", False),
        ("span-submit", False),
    ],
)
def test_the_check_finds_a_name_as_a_word_of_a_string(value, found):
    pattern = naming(["similarity", "criteria", "spans", "similarity+spans"], ["Similarity (5-way)"])
    assert bool(pattern.search(value)) is found


def test_the_check_lets_the_registration_name_the_types_and_nothing_else_in_its_file():
    default = settings.DEFAULT_TASK_TYPE
    assert exempt(REGISTRATION, default) and exempt(REGISTRATION, settings.TASK_TYPES[default])
    assert not exempt(REGISTRATION, f"{default} help text")
    assert not exempt("campaigns/models.py", default)


def test_the_check_reads_parasols_apps_and_no_installed_package():
    folders = app_folders()
    assert ROOT / "annotation" in folders and ROOT / "campaigns" in folders
    assert [folder for folder in folders if "site-packages" in folder.parts] == []


def test_the_check_reads_template_and_script_strings_but_not_their_comments():
    template = "{# 'spans' in a comment #}\n{% if 'spans' in campaign.task_type %}<p class=''>"
    script = '// "criteria" in a comment\nvar x = document.querySelector("#item .criteria");'
    assert quoted_strings(template, ".html") == [(2, "spans"), (2, "")]
    assert quoted_strings(script, ".js") == [(2, "#item .criteria")]
