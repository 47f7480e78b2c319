"""The documentation's generated references match the code they are generated from."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docsite import pages as docsite
from metrics.registry import METRICS

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent


def cli_sections(page):
    """{command: the text of its help block} from the CLI reference page."""
    return dict(re.findall(r"(?ms)^## (\S+)\n.*?```text\n(.*?)\n```", page))


def live_help(names):
    """What `python manage.py NAME --help` prints for each name, the commands run side by side."""
    env = os.environ | {"COLUMNS": docsite.HELP_COLUMNS}
    running = {
        name: subprocess.Popen(
            [sys.executable, "manage.py", name, "--help"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
        )
        for name in names
    }
    return {name: process.communicate()[0] for name, process in running.items()}


def test_the_cli_reference_has_every_command_file_and_each_block_is_its_live_help():
    on_disk = {path.stem for path in ROOT.glob("*/management/commands/*.py") if path.stem != "__init__"}
    sections = cli_sections(docsite.cli_page(docsite.project_commands()))
    assert set(sections) == on_disk
    helps = live_help(sorted(on_disk))
    for name, block in sections.items():
        assert block == helps[name].rstrip(), name


SETTINGS_SOURCE = docsite.SETTINGS_FILE.read_text(encoding="utf-8")


def test_a_setting_added_to_the_settings_module_appears_in_the_reference():
    source = SETTINGS_SOURCE + (
        "\n# How long the fixture's probe waits for an answer.\n"
        'PARASOL_PROBE_SECONDS = env_int("PARASOL_PROBE_SECONDS", 4 * 15, minimum=3)\n'
    )
    page = docsite.settings_page(source)
    row = next(line for line in page.splitlines() if "`PARASOL_PROBE_SECONDS`" in line)
    assert row == (
        "| `PARASOL_PROBE_SECONDS` | integer, ≥ 3 | `60 (4 * 15)` | How long the fixture's probe waits for an answer. |"
    )
    assert "`PARASOL_PROBE_SECONDS`" not in docsite.settings_page(SETTINGS_SOURCE)


def test_a_setting_without_a_comment_stops_the_build_naming_it():
    source = SETTINGS_SOURCE + '\n\nPARASOL_SILENT = env_bool("PARASOL_SILENT", False)\n'
    with pytest.raises(docsite.UndocumentedSetting, match="PARASOL_SILENT"):
        docsite.settings_page(source)


@pytest.mark.parametrize(
    "source, expected",
    [
        # Settings grouped under one comment share it.
        ("# Limits.\nA = env_int('PARASOL_A', 1)\nB = env_int('PARASOL_B', 2)\n", ["Limits.", "Limits."]),
        # A blank line ends the group.
        ("# Limits.\nA = env_int('PARASOL_A', 1)\n\nB = env_int('PARASOL_B', 2)\n", None),
        # Inside a dict, the comment above the entry's line.
        (
            "X = {\n    # Rate.\n    'a': env_str('PARASOL_A', '1/s'),\n    'b': env_str('PARASOL_B', '2/s'),\n}\n",
            ["Rate.", "Rate."],
        ),
    ],
)
def test_each_setting_gets_the_comment_written_for_it(source, expected):
    if expected is None:
        with pytest.raises(docsite.UndocumentedSetting, match="PARASOL_B"):
            docsite.documented_settings(source)
    else:
        assert [s.meaning for s in docsite.documented_settings(source)] == expected


def test_every_registered_metric_has_a_page_built_from_its_card():
    pages = docsite.metric_cards()
    for name in METRICS:
        assert any(
            f"| `{name}` |" in content for path, content in pages.items() if path != docsite.METRICS_LIBRARY_PAGE
        )
    assert "### lev" not in pages[docsite.METRICS_LIBRARY_PAGE]
    assert "## Benchmarks (not tests)" in pages[docsite.METRICS_LIBRARY_PAGE]


def test_a_registered_metric_without_a_card_stops_the_build_naming_it():
    readme = docsite.METRICS_README.read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="newmetric"):
        docsite.split_metric_cards(readme, {**METRICS, "newmetric": None})


def test_the_api_page_lists_every_operation_of_the_schema():
    schema = docsite.openapi_schema()
    page = docsite.api_page(schema)
    for path, operations in schema["paths"].items():
        for method in operations:
            assert f"### `{method.upper()} {path}`" in page
    assert "Bulk create: a list of pairs, all accepted or none." in page


def test_a_setting_added_to_the_settings_module_reaches_the_built_site(tmp_path, monkeypatch):
    """The whole MkDocs build, strict, with the hook reading a settings module that has one more setting."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    settings_file = tmp_path / "settings.py"
    settings_file.write_text(
        SETTINGS_SOURCE
        + '\n# Judges a probe campaign admits.\nPARASOL_PROBE_JUDGES = env_int("PARASOL_PROBE_JUDGES", 7)\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(ROOT)
    config = load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp_path / "site"))
    monkeypatch.setattr(config.plugins["docsite/pages.py"], "SETTINGS_FILE", settings_file)
    build(config)
    page = (tmp_path / "site" / "operations" / "settings" / "index.html").read_text(encoding="utf-8")
    assert "<code>PARASOL_PROBE_JUDGES</code>" in page and "Judges a probe campaign admits." in page
