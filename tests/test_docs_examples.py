"""Every documentation page's code blocks run, so that no page shows code that does not work.

The contract the pages are written to (tests/docs_support implements it):

1. Code is in fenced blocks only: an indented code block fails the page, naming its line.
2. ```python blocks run in order in one namespace, in a scratch folder (the working directory) holding a
   copy of the repository's examples/ (`examples/mnist/lenet_deploy.prototxt`) and, when CAFFE_PUBLIC_MODELS
   names the folder of public models, a copy of it as models/ (`models/bvlc/models/bvlc_googlenet/...`).
3. ```console blocks: each line starting with `$ ` is a command run with bash in that same folder (python
   and console blocks run in document order); the other lines are sample output, not checked. `pip install`
   is not run: each local path it names must exist (in the folder or the repository) and declare the extras
   it asks for. `nox` is not run: each session it names must exist in noxfile.py. A failing command fails the
   page with its output.
4. ```prototxt blocks must parse: as one LayerParameter when the block is a single `layer { ... }`, as a
   SolverParameter when a top-level field is base_lr, net, train_net, solver_type or type, else as a
   NetParameter.
5. ```text, ```toml, ```yaml, ```ini and ```json blocks are listings, not run; any other language (or none)
   fails the page.
6. `<!-- docs-test: skip: REASON -->` on the line before a fence (blank lines allowed) keeps that block from
   running; the test reports it as a DocsExampleSkipped warning and in its `skipped_blocks` property.
7. `<!-- docs-test: public-models -->` there marks a block that reads models/: without CAFFE_PUBLIC_MODELS it
   does not run and is reported as in 6, with a reason naming the variable. Blocks that use what such a
   block made carry the marker too.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tests.docs_support.console import CommandError
from tests.docs_support.markdown import PageError
from tests.docs_support.runner import prepare_workdir, run_page

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = sorted(str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md"))


class DocsExampleSkipped(UserWarning):
    """A documentation block that a skip marker kept from running."""


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page, tmp_path, record_property):
    try:
        report = run_page(DOCS / page, prepare_workdir(REPO, tmp_path), REPO)
    except (PageError, CommandError) as err:  # the message says it all; the runner's traceback would not help
        report, failure = None, str(err)
    if report is None:
        pytest.fail(failure, pytrace=False)
    skipped = [f"docs/{page}:{block.line}: {block.language} block not run: {block.skip_reason}"
               for block in report.skipped]
    for line in skipped:
        warnings.warn(DocsExampleSkipped(line), stacklevel=1)
    record_property("skipped_blocks", skipped)
