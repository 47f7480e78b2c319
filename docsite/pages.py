"""The documentation site's generated pages, and the MkDocs hooks (mkdocs.yml) that add them at each build.

Reference pages are built from the code, never copied into docs/: the settings
reference from the comments above each `env_*` call of `parasol/settings.py`, the
CLI reference from each command's own argparse help, one page per metric card of
`metrics/README.md` beside its registry entry, the OpenAPI schema from
drf-spectacular, and the apps' READMEs as they are. A fact therefore has one home:
the code or the README next to it.
"""

import ast
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SETTINGS_FILE = ROOT / "parasol" / "settings.py"
METRICS_README = ROOT / "metrics" / "README.md"
PROJECT_APPS = ("campaigns", "annotation", "scoring", "generation", "reports", "demo")
# argparse wraps help to the terminal's width: one fixed width, so the page and `--help` agree.
HELP_COLUMNS = "100"
HELPERS = {
    "env_str": "text",
    "env_bool": "boolean",
    "env_int": "integer",
    "env_list": "comma-separated list",
    "env_mapping": "name=value list",
}
# READMEs that live beside their code, shown in the site as they are.
INCLUDED_READMES = {
    "annotation/tasktypes/README.md": "development/task-type-contract.md",
    "generation/README.md": "researchers/generation-details.md",
    "reports/analysis/README.md": "analysis/files.md",
}
SETTINGS_PAGE = "operations/settings.md"
CLI_PAGE = "researchers/cli.md"
API_PAGE = "researchers/api-schema.md"
API_FILE = "researchers/openapi.yaml"
METRICS_LIBRARY_PAGE = "metrics/library.md"
METRICS_NAV_TITLE = "Metrics"


class UndocumentedSetting(ValueError):
    """A setting read from the environment with no comment saying what it is for."""


# -- settings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    variable: str  # the environment variable
    kind: str  # what the typed helper accepts
    default: str  # the default as written in the settings module
    minimum: str | None
    meaning: str  # the comment above it, one paragraph


def _comment_above(lines, lineno):
    """The block of `#` lines right above 1-based `lineno`, as one paragraph ('' when there is none)."""
    block = []
    index = lineno - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        block.insert(0, lines[index].strip().lstrip("#").strip())
        index -= 1
    return " ".join(block)


def _constant_value(node):
    """The value of an expression made only of numbers and arithmetic (`20 * 1024 * 1024`), else None."""
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop)
    if isinstance(node, ast.Constant) or not all(isinstance(n, allowed) for n in ast.walk(node)):
        return None
    return eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})  # numbers only


def _describe(source, node):
    segment = ast.get_source_segment(source, node)
    value = _constant_value(node)
    return f"{value:,} ({segment})" if isinstance(value, int) else segment


def documented_settings(source):
    """Every variable the settings module reads through a typed helper, with its comment, in file order.

    A call's comment is the block right above its line, else the nearest one above it with no
    blank line between (grouped settings share one comment), else the one above a statement
    holding it. Raises `UndocumentedSetting` naming the variables without one.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    settings, missing, seen = [], [], set()
    for call in sorted(_helper_calls(tree), key=lambda c: (c.lineno, c.col_offset)):
        variable = call.args[0].value
        if variable in seen:
            continue
        seen.add(variable)
        meaning = _comment_above(lines, call.lineno) or _statement_comment(lines, call, parents)
        if not meaning:
            missing.append(variable)
        minimum = next((kw.value for kw in call.keywords if kw.arg == "minimum"), None)
        default = call.args[1] if len(call.args) > 1 else None
        settings.append(
            Setting(
                variable=variable,
                kind=HELPERS[call.func.id],
                default=_describe(source, default) if default is not None else "",
                minimum=_describe(source, minimum) if minimum is not None else None,
                meaning=meaning,
            )
        )
    if missing:
        raise UndocumentedSetting(f"settings with no comment above them: {', '.join(missing)}")
    return settings


def _helper_calls(tree):
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in HELPERS
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]


def _statement_comment(lines, node, parents):
    # Grouped settings: walk back over code lines (no blank line between) to the group's comment.
    index = node.lineno - 2
    while index >= 0 and lines[index].strip() and not lines[index].strip().startswith("#"):
        index -= 1
    if index >= 0 and lines[index].strip().startswith("#"):
        return _comment_above(lines, index + 2)
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.stmt) and _comment_above(lines, node.lineno):
            return _comment_above(lines, node.lineno)
    return ""


def _cell(text):
    return text.replace("|", "\\|")


def settings_page(source):
    rows = [
        "| variable | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for s in documented_settings(source):
        kind = f"{s.kind}, ≥ {s.minimum}" if s.minimum else s.kind
        default = f"`{_cell(s.default)}`" if s.default else "—"
        rows.append(f"| `{s.variable}` | {kind} | {default} | {_cell(s.meaning)} |")
    return "\n".join(
        [
            "# Settings reference",
            "",
            "Generated at each build from `parasol/settings.py`: every environment variable the",
            "settings module reads through its typed helpers, with the comment written above it.",
            "A malformed value (a word where a number is due, a number under its minimum) stops",
            "start-up with a message naming the variable. The metrics read a few more variables",
            "of their own when used outside Django: see",
            f"[the metrics library]({_rel(SETTINGS_PAGE, METRICS_LIBRARY_PAGE)}).",
            "Several machines: [deployment](../deployment.md).",
            "",
            *rows,
            "",
        ]
    )


def _rel(from_page, to_page):
    return os.path.relpath(to_page, os.path.dirname(from_page) or ".")


# -- command line -----------------------------------------------------------------------------------


def project_commands():
    """(app, command) for every management command of Parasol's own apps, sorted by app then name."""
    from django.core.management import get_commands

    return sorted((app, name) for name, app in get_commands().items() if app in PROJECT_APPS)


def command_help(app, name):
    """What `python manage.py NAME --help` prints, at HELP_COLUMNS wide."""
    from django.core.management import load_command_class

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        return load_command_class(app, name).create_parser("manage.py", name).format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def cli_page(commands):
    parts = [
        "# Command-line reference",
        "",
        "Generated at each build from the commands themselves: each block is what",
        "`python manage.py COMMAND --help` prints. Run them in the clone after",
        "`. .venv/bin/activate && export DJANGO_DEBUG=true` (the virtualenv and the local settings:",
        "[the command line](../getting-started/index.md#the-command-line)).",
        "",
    ]
    for app, name in commands:
        parts += [f"## {name}", "", f"From `{app}/management/commands/{name}.py`.", "", "```text"]
        parts += [command_help(app, name).rstrip(), "```", ""]
    return "\n".join(parts)


# -- OpenAPI ----------------------------------------------------------------------------------------


def openapi_schema():
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def openapi_yaml(schema):
    from drf_spectacular.renderers import OpenApiYamlRenderer

    return OpenApiYamlRenderer().render(schema, renderer_context={}).decode()


def _schema_type(schema):
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}))}"
    options = [*schema.get("allOf", []), *schema.get("oneOf", []), *schema.get("anyOf", [])]
    if options:
        return " or ".join(_schema_type(s) for s in options)
    if "enum" in schema:
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
    kind = schema.get("format", schema.get("type", "any"))
    kind = " or ".join(kind) if isinstance(kind, list) else kind  # OpenAPI 3.1: ["string", "null"]
    rules = _rules(schema)
    return f"{kind} ({rules})" if rules else kind


# The rules a schema states beside its type, as the server enforces them (parasol.api_fields).
RULES = [
    ("minimum", "at least {}"),
    ("maximum", "at most {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("pattern", "matching `{}`"),
]


def _rules(schema):
    return ", ".join(text.format(schema[key]) for key, text in RULES if key in schema)


def _body_type(content):
    return "; ".join(f"{kind}: {_schema_type(body.get('schema', {}))}" for kind, body in content.items())


def api_page(schema):
    info = schema["info"]
    parts = [
        "# REST API schema",
        "",
        f"{info['title']} {info['version']}: {info.get('description', '')}",
        "",
        "Generated at each build from the API's code by drf-spectacular, the same schema a",
        "researcher's session or token gets at `/api/schema/`. The raw file:",
        f"[openapi.yaml]({Path(API_FILE).name}). Authentication, throttling and what each call",
        "is for: [REST API](api.md).",
        "",
        "## Endpoints",
        "",
    ]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            parts += [f"### `{method.upper()} {path}`", ""]
            if operation.get("description"):
                parts += [operation["description"], ""]
            params = operation.get("parameters", [])
            if params:
                parts += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
                for p in params:
                    meaning = p.get("description") or p.get("schema", {}).get("description", "")
                    parts.append(
                        f"| `{p['name']}` | {p['in']} | {_cell(_schema_type(p.get('schema', {})))} | "
                        f"{'yes' if p.get('required') else 'no'} | {_cell(meaning)} |"
                    )
                parts.append("")
            if "requestBody" in operation:
                parts += [f"Request body: {_body_type(operation['requestBody'].get('content', {}))}.", ""]
            for status, response in operation.get("responses", {}).items():
                body = _body_type(response.get("content", {}))
                parts.append(f"- **{status}** {response.get('description', '')} {body}".rstrip())
            parts.append("")
    parts += ["## Schemas", ""]
    for name, component in schema.get("components", {}).get("schemas", {}).items():
        parts += [f"### {name}", ""]
        if component.get("description"):
            parts += [component["description"], ""]
        properties = component.get("properties")
        if not properties:
            parts += [f"{_cell(_schema_type(component))}", ""]
            continue
        required = set(component.get("required", []))
        parts += ["| field | type | required | read only | meaning |", "|---|---|---|---|---|"]
        for field, spec in properties.items():
            parts.append(
                f"| `{field}` | {_cell(_schema_type(spec))} | {'yes' if field in required else 'no'} | "
                f"{'yes' if spec.get('readOnly') else 'no'} | {_cell(spec.get('description', ''))} |"
            )
        parts.append("")
    return "\n".join(parts)


# -- metrics ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Card:
    slug: str  # the page's file name
    names: tuple  # the registered metrics it describes
    title: str
    body: str  # the card's Markdown, headings shifted so the title is the page's h1


def split_metric_cards(readme, registered):
    """(cards, library): one card per `###` heading that starts with registered metric names, and the rest.

    Raises ValueError naming any registered metric without a card.
    """
    sections = re.split(r"(?m)^(?=### )", readme)
    library, cards = [sections[0]], []
    for section in sections[1:]:
        heading, _, body = section.partition("\n")
        head = heading[4:].split(" — ", 1)[0]
        names = tuple(name.strip() for name in head.split(","))
        if not all(name in registered for name in names):
            library.append(section)
            continue
        slug = os.path.commonprefix(names).rstrip("_") if len(names) > 1 else names[0]
        # The README's `## Benchmarks` and later `##` sections follow the last card: they belong to the library.
        body, rest = _split_at_level2(body)
        library.append(rest)
        cards.append(Card(slug, names, heading[4:].strip(), re.sub(r"(?m)^####", "##", body)))
    missing = [name for name in registered if not any(name in card.names for card in cards)]
    if missing:
        raise ValueError(f"metrics with no card in metrics/README.md: {', '.join(missing)}")
    return cards, "".join(library)


def _split_at_level2(text):
    match = re.search(r"(?m)^## ", text)
    return (text[: match.start()], text[match.start() :]) if match else (text, "")


def metric_page(card, registry):
    rows = ["| metric | printed as | direction | class | queue | scored |", "|---|---|---|---|---|---|"]
    for name in card.names:
        entry = registry[name]
        scored = "only when named in `PARASOL_METRICS`" if entry.opt_in else "by default"
        rows.append(
            f"| `{name}` | {entry.title} | {entry.direction} = closer | `{entry.path}` | `{entry.queue}` | {scored} |"
        )
    return "\n".join(
        [
            f"# {card.title}",
            "",
            "From the registry (`metrics/registry.py`):",
            "",
            *rows,
            "",
            "The card below is `metrics/README.md`'s. Every score is stored with the",
            "metric's signature; speed figures and their commands: [performance](../operations/performance.md).",
            "",
            card.body.strip(),
            "",
        ]
    )


def metric_cards():
    from metrics.registry import METRICS

    cards, library = split_metric_cards(METRICS_README.read_text(encoding="utf-8"), METRICS)
    pages = {f"metrics/{c.slug}.md": metric_page(c, METRICS) for c in cards}
    pages[METRICS_LIBRARY_PAGE] = library.replace("# Parasol metrics", "# The metrics library", 1)
    return pages


def included_readme(source_path):
    text = (ROOT / source_path).read_text(encoding="utf-8")
    heading, _, rest = text.partition("\n")
    return f"{heading}\n\n*This page is `{source_path}`, shown as it is.*\n{rest}"


# -- MkDocs hooks -----------------------------------------------------------------------------------


def _setup_django():
    # MkDocs loads this file by path and restores sys.path afterwards: make the project importable.
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django

    # Only the command parsers, the URL map and the settings' values are read; no database is opened.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "parasol.settings")
    os.environ.setdefault("DJANGO_DEBUG", "true")
    django.setup()


def generated_pages():
    """{path inside docs/: content} for every generated page and file."""
    _setup_django()
    schema = openapi_schema()
    pages = {
        SETTINGS_PAGE: settings_page(SETTINGS_FILE.read_text(encoding="utf-8")),
        CLI_PAGE: cli_page(project_commands()),
        API_PAGE: api_page(schema),
        API_FILE: openapi_yaml(schema),
        **metric_cards(),
    }
    pages.update({page: included_readme(source) for source, page in INCLUDED_READMES.items()})
    return pages


_PAGES = {}


def on_config(config):
    _PAGES.clear()
    _PAGES.update(generated_pages())
    # One nav entry per metric card, after the section's hand-written pages.
    cards = [p for p in _PAGES if p.startswith("metrics/") and p != METRICS_LIBRARY_PAGE]  # the README's order
    for section in config["nav"]:
        if isinstance(section, dict) and METRICS_NAV_TITLE in section:
            section[METRICS_NAV_TITLE].extend(cards)
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    for path, content in _PAGES.items():
        files.append(File.generated(config, path, content=content))
    return files


def on_serve(server, config, builder):
    for source in [SETTINGS_FILE, METRICS_README, *(ROOT / s for s in INCLUDED_READMES)]:
        server.watch(str(source))
    return server


def dump(out):
    """Write the generated pages under `out`, to read them without a build: `python -m docsite.pages DIR`."""
    pages = generated_pages()
    for path, content in pages.items():
        target = Path(out) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return sorted(pages)


if __name__ == "__main__":
    print("\n".join(dump(sys.argv[1] if len(sys.argv) > 1 else "var/docs-generated")))
