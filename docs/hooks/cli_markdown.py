"""The CLI reference page, built from the argparse parser of every console script the caffe packages install.

Each tool's module has a `build_parser()`; the page shows what `TOOL --help` prints, one section per tool and
per subcommand (argparse subparsers, or the commands a tool dispatches itself through a `COMMANDS` map, as
`caffe` does), so the reference cannot drift from the tools.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import inspect
from importlib import metadata
from types import ModuleType

PAGE = "reference/cli.md"
CORE = "caffe-core"
WIDTH = 100
INTRO = """# Command-line tools

Every command the packages install, with the text its `--help` prints. This page is generated from each
tool's own argument parser when the site is built, so it always matches the code.

"""


class MissingParserError(RuntimeError):
    """A console script whose module has no `build_parser()` to document it from."""


def console_scripts() -> list[metadata.EntryPoint]:
    """The console scripts of caffe-core (first) and of the installed caffe-layers-* packs, by name."""
    found = {ep.name: ep for ep in metadata.entry_points(group="console_scripts")
             if ep.dist is not None and (ep.dist.name == CORE or ep.dist.name.startswith("caffe-layers-"))}
    return sorted(found.values(), key=lambda ep: (ep.dist.name != CORE, ep.dist.name, ep.name))


def tool_parser(script: metadata.EntryPoint) -> tuple[ModuleType, argparse.ArgumentParser]:
    """The script's module and the parser its `build_parser()` returns."""
    module = importlib.import_module(script.module)
    if not callable(getattr(module, "build_parser", None)):
        raise MissingParserError(f"console script {script.name} ({script.value}): {script.module} has no "
                                 f"build_parser() for the CLI reference")
    return module, module.build_parser()


def help_text(parser: argparse.ArgumentParser) -> str:
    """What `--help` prints, at a fixed width and without colour whatever the terminal."""
    parser.formatter_class = functools.partial(parser.formatter_class, width=WIDTH)
    parser.color = False  # Python 3.14 colours help when stdout is a terminal (mkdocs serve)
    return parser.format_help().rstrip()


def subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each argparse subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return []


def dispatched_commands(module: ModuleType) -> list[tuple[str, str]]:
    """(name, description) of each command in the module's `COMMANDS` map, from the command's docstrings."""
    commands = []
    for name, (module_name, function_name) in getattr(module, "COMMANDS", {}).items():
        command_module = importlib.import_module(module_name)
        docs = [inspect.getdoc(command_module), inspect.getdoc(getattr(command_module, function_name))]
        commands.append((name, "\n\n".join(doc for doc in docs if doc)))
    return commands


def fenced(text: str) -> str:
    """Text as a fenced block that the page shows verbatim."""
    return f"```text\n{text}\n```\n"


def tool_section(script: metadata.EntryPoint) -> str:
    """The Markdown of one tool: its module's docstring, its help and a subsection per subcommand."""
    module, parser = tool_parser(script)
    parts = [f"## `{script.name}`\n", f"From *{script.dist.name}* (`{script.value}`).\n"]
    if module.__doc__ and module.__doc__ != parser.description:
        parts.append(inspect.cleandoc(module.__doc__) + "\n")
    parts.append(fenced(help_text(parser)))
    for name, description in dispatched_commands(module):
        parts += [f"### `{script.name} {name}`\n", description + "\n"]
    for name, summary, sub in subparsers(parser):
        parts += [f"### `{script.name} {name}`\n", summary + "\n" if summary else "", fenced(help_text(sub))]
    return "\n".join(part for part in parts if part)


def page() -> str:
    """The whole CLI reference page."""
    scripts = console_scripts()
    index = "".join(f"- [`{s.name}`](#{s.name}) ({s.dist.name})\n" for s in scripts)
    return INTRO + index + "\n" + "\n".join(tool_section(s) for s in scripts)
