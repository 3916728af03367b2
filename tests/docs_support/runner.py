"""Running one page's code blocks in document order, in a scratch folder that holds the examples and models.

python blocks share one namespace and run in this process with the folder as the working directory (and on
sys.path, as for `python -c`); console commands run with bash in the same folder; prototxt blocks must
parse; listings (text, toml, yaml, ini, json) are not run; any other fence language fails the page. Blocks
marked as reading the public models run only when CAFFE_PUBLIC_MODELS names their folder (copied as models/).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from caffe_core.errors import CaffeError
from caffe_core.testing.public_models import SKIP_REASON, public_models_folder
from tests.docs_support.console import commands, run_command
from tests.docs_support.markdown import Block, PageError, fenced_blocks, indented_code_lines
from tests.docs_support.prototxt import parse_prototxt

EXECUTED = ("python", "console", "prototxt")
LISTINGS = ("text", "toml", "yaml", "ini", "json")
# What git ignores in examples/ (made by training), so that a page runs as on a fresh checkout.
EXAMPLE_IGNORES = shutil.ignore_patterns("mnist_*_lmdb", "*.tmp", "lenet_iter_*", "__pycache__")


class ExampleError(AssertionError):
    """A block that failed: the message names the page and the block's line."""


@dataclasses.dataclass
class PageReport:
    """The blocks of a page that ran and those a skip marker kept from running."""

    ran: list[Block] = dataclasses.field(default_factory=list)
    skipped: list[Block] = dataclasses.field(default_factory=list)


def prepare_workdir(repo: Path, workdir: Path) -> Path:
    """Fills workdir with a copy of the repository's examples/ and, when CAFFE_PUBLIC_MODELS names a folder,
    a copy of that folder as models/."""
    shutil.copytree(repo / "examples", workdir / "examples", ignore=EXAMPLE_IGNORES)
    public_models = public_models_folder()
    if public_models is not None:
        shutil.copytree(public_models, workdir / "models")
    return workdir


def page_blocks(page: Path, source: str) -> list[Block]:
    """The page's fenced blocks, after checking that it has no indented code and no unknown language."""
    text = page.read_text()
    indented = indented_code_lines(text, source)
    if indented:
        raise PageError(f"{source}: indented code block at line {', '.join(map(str, indented))}; use a "
                        f"fenced block with a language ({', '.join(EXECUTED + LISTINGS)})")
    blocks = fenced_blocks(text, source)
    for block in blocks:
        if block.language not in EXECUTED + LISTINGS:
            raise PageError(f"{source}:{block.line}: fence language {block.language or '(none)'!r} is not "
                            f"one of {', '.join(EXECUTED + LISTINGS)}")
    return blocks


@contextlib.contextmanager
def _inside(workdir: Path) -> Iterator[None]:
    """workdir as the working directory and first on sys.path; its modules forgotten afterwards."""
    previous = Path.cwd()
    os.chdir(workdir)
    sys.path.insert(0, str(workdir))
    try:
        yield
    finally:
        os.chdir(previous)
        sys.path.remove(str(workdir))
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", None) or "").startswith(str(workdir)):
                del sys.modules[name]


def _run_python(block: Block, namespace: dict, page: Path, source: str) -> None:
    code = compile("\n" * block.line + block.code, str(page), "exec")
    try:
        exec(code, namespace)
    except Exception as err:
        raise ExampleError(f"{source}:{block.line}: python block failed: {type(err).__name__}: {err}") \
            from err


def _check_prototxt(block: Block, source: str) -> None:
    try:
        parse_prototxt("\n" * block.line + block.code, source)
    except CaffeError as err:
        raise ExampleError(f"{source}:{block.line}: prototxt block does not parse: {err}") from err


def _run_block(block: Block, namespace: dict, page: Path, workdir: Path, repo: Path, source: str) -> None:
    if block.language == "python":
        _run_python(block, namespace, page, source)
    elif block.language == "console":
        for command in commands(block.code, block.line + 1):
            run_command(command, workdir, repo, source)
    else:
        _check_prototxt(block, source)


def run_page(page: Path, workdir: Path, repo: Path) -> PageReport:
    """Runs the page's blocks in document order in workdir; raises at the first that fails."""
    source = str(page.relative_to(repo)) if page.is_relative_to(repo) else str(page)
    blocks = page_blocks(page, source)
    namespace: dict = {"__name__": "__main__"}
    report = PageReport()
    without_public_models = public_models_folder() is None
    with _inside(workdir):
        for block in blocks:
            if block.skip_reason is not None:
                report.skipped.append(block)
            elif block.reads_public_models and without_public_models:
                report.skipped.append(dataclasses.replace(block, skip_reason=SKIP_REASON))
            elif block.language in EXECUTED:
                _run_block(block, namespace, page, workdir, repo, source)
                report.ran.append(block)
    return report
