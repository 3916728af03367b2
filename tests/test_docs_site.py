"""The documentation site's structure: every page is in the nav (and every nav entry is a page), and the
CLI reference page, generated from the tools' parsers, documents every console script."""

import importlib.util
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from caffe_core.tools import caffe_cli

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
EXPECTED_SCRIPTS = {"caffe", "caffe-packs", "draw_net", "caffe_to_onnx", "upgrade_net_proto_text",
                    "upgrade_net_proto_binary", "upgrade_solver_proto_text", "convert_imageset",
                    "compute_image_mean", "convert_mnist_data"}


def load_cli_markdown():
    spec = importlib.util.spec_from_file_location("cli_markdown", DOCS / "hooks" / "cli_markdown.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def nav_pages(entries) -> list[str]:
    """The page paths of a MkDocs nav, sections flattened."""
    pages = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    with open(REPO / "mkdocs.yml") as f:
        nav = nav_pages(yaml.safe_load(f)["nav"])
    generated = {load_cli_markdown().PAGE}
    on_disk = {str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md")}
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert on_disk - set(nav) == set(), "pages missing from the nav in mkdocs.yml"
    assert set(nav) - on_disk - generated == set(), "nav entries with no page"
    assert generated & on_disk == set(), "generated pages must not be committed"


def test_cli_reference_documents_every_console_script_and_subcommand():
    cli_markdown = load_cli_markdown()
    page = cli_markdown.page()
    scripts = {script.name for script in cli_markdown.console_scripts()}
    assert EXPECTED_SCRIPTS <= scripts
    for name in scripts:
        assert f"\n## `{name}`\n" in page
    for command in caffe_cli.COMMANDS:
        assert f"\n### `caffe {command}`\n" in page
    for command in ("list", "check", "docs", "new"):
        assert f"\n### `caffe-packs {command}`\n" in page
    assert "usage: caffe-packs new [-h] --layer LAYER [--number NUMBER] name" in page
    assert "--sigint_effect SIGINT_EFFECT" in page and "--backend BACKEND" in page


def test_cli_reference_refuses_a_console_script_without_a_parser():
    cli_markdown = load_cli_markdown()
    script = metadata.EntryPoint(name="no_parser", value="json:dumps", group="console_scripts")
    with pytest.raises(cli_markdown.MissingParserError, match="no_parser.*json has no build_parser"):
        cli_markdown.tool_parser(script)
