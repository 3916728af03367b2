"""MkDocs hook: adds the CLI reference page, generated in memory from the tools' parsers at every build."""

from __future__ import annotations

import cli_markdown  # beside this hook: MkDocs puts the hook's folder on sys.path while loading it
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Adds reference/cli.md to the site's files."""
    files.append(File.generated(config, cli_markdown.PAGE, content=cli_markdown.page()))
    return files
