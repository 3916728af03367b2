"""The documentation runner itself (tests/docs_support), on small pages: what it runs, checks and refuses.

The pages below write their fences as ''' (turned into backticks), so that they read as Markdown here.
"""

from pathlib import Path

import pytest

from caffe_core.testing.public_models import SKIP_REASON, VARIABLE
from tests.docs_support.console import CommandError, nox_sessions
from tests.docs_support.markdown import PageError, fenced_blocks, indented_code_lines
from tests.docs_support.runner import ExampleError, prepare_workdir, run_page

REPO = Path(__file__).resolve().parents[1]


def markdown(text: str) -> str:
    return text.replace("'''", "```")


def page(folder: Path, text: str) -> tuple[Path, Path]:
    """The page written in folder, and an empty working folder beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "page.md"
    path.write_text(markdown(text))
    workdir = folder / "work"
    workdir.mkdir()
    return path, workdir


def test_indented_code_fails_naming_its_line_but_list_and_admonition_content_does_not():
    text = """# T

- item

    more of the item

!!! note

    the note

text

    indented code
    more

    still the same code
"""
    assert indented_code_lines(text, "p.md") == [13]


def test_fenced_blocks_keep_their_language_line_and_indentation():
    text = markdown("""1. step

    '''python
    if True:
        x = 1
    '''
""")
    [block] = fenced_blocks(text, "p.md")
    assert (block.language, block.line, block.code) == ("python", 3, "if True:\n    x = 1\n")
    assert indented_code_lines(text, "p.md") == []


def test_python_and_console_blocks_share_the_working_folder_and_namespace_in_order(tmp_path):
    path, workdir = page(tmp_path, """'''python
from pathlib import Path
Path("a.txt").write_text("hi")
'''

'''console
$ test -f a.txt && echo there > b.txt
sample output, not checked
'''

'''python
assert Path("b.txt").read_text() == "there\\n"
'''
""")
    report = run_page(path, workdir, REPO)
    assert [block.language for block in report.ran] == ["python", "console", "python"]
    assert (workdir / "b.txt").exists() and Path.cwd() != workdir


def test_a_failing_python_block_names_its_line(tmp_path):
    path, workdir = page(tmp_path, """# T

'''python
x = 1
'''

'''python
assert x == 2, "x is 1"
'''
""")
    with pytest.raises(ExampleError, match=r"page.md:7: python block failed: AssertionError: x is 1"):
        run_page(path, workdir, REPO)


def test_a_failing_command_fails_with_its_output(tmp_path):
    path, workdir = page(tmp_path, """'''console
$ echo first
first
$ echo oops >&2 && \\
  false
'''
""")
    failure = r"page.md:4: `echo oops >&2 &&   false` exited with status 1:\noops"
    with pytest.raises(CommandError, match=failure):
        run_page(path, workdir, REPO)


def test_pip_install_is_checked_not_run(tmp_path):
    good, workdir = page(tmp_path, """'''console
$ python3 -m pip install './caffe_core[onnx,test]' ./caffe_layers_std mkdocs==1.6.1 && touch ran
'''
""")
    assert len(run_page(good, workdir, REPO).ran) == 1
    assert (workdir / "ran").exists()
    for name, command, error in (
            ("missing", "pip install ./caffe_layers_nothing", "exists neither"),
            ("extra", "pip install -e './caffe_core[nothing]'", "declares no extra nothing")):
        bad, _ = page(tmp_path / name, f"'''console\n$ {command}\n'''\n")
        with pytest.raises(CommandError, match=error):
            run_page(bad, workdir, REPO)


def test_nox_sessions_are_checked_not_run(tmp_path):
    assert {"tests", "docs", "pack", "catalogue"} <= nox_sessions(REPO / "noxfile.py")
    good, workdir = page(tmp_path, """'''console
$ python3 -m nox -s docs "pack(pack='std')" -- -x
'''
""")
    run_page(good, workdir, REPO)
    bad, _ = page(tmp_path / "bad", "'''console\n$ nox --session=nothing\n'''\n")
    with pytest.raises(CommandError, match="nox session 'nothing' is not in noxfile.py"):
        run_page(bad, workdir, REPO)


def test_prototxt_blocks_parse_as_layer_solver_or_net(tmp_path):
    path, workdir = page(tmp_path, """'''prototxt
layer {
  name: "r"
  type: "ReLU"
}
'''
'''prototxt
net: "n.prototxt"
base_lr: 0.01
'''
'''prototxt
name: "n"
layer { name: "a" }
layer { name: "b" }
'''
""")
    assert len(run_page(path, workdir, REPO).ran) == 3
    bad, _ = page(tmp_path / "bad", """# T
'''prototxt
layer {
  name: "r"
  kind: "ReLU"
}
'''
""")
    with pytest.raises(ExampleError, match=r"page.md:2: prototxt block does not parse: .*:5:3: .*kind"):
        run_page(bad, workdir, REPO)


def test_a_skip_marker_keeps_its_block_from_running_and_is_reported(tmp_path):
    path, workdir = page(tmp_path, """<!-- docs-test: skip: needs a GPU -->

'''python
raise SystemError
'''
'''text
listing
'''
'''python
x = 1
'''
""")
    report = run_page(path, workdir, REPO)
    assert [(block.line, block.skip_reason) for block in report.skipped] == [(3, "needs a GPU")]
    assert [block.line for block in report.ran] == [9]


PUBLIC_MODELS_PAGE = """'''python
x = 1
'''

<!-- docs-test: public-models -->
'''python
open("models/net.prototxt").read()
'''
"""


def test_a_public_models_block_runs_when_the_variable_names_the_folder(tmp_path, monkeypatch):
    models = tmp_path / "public"
    models.mkdir()
    (models / "net.prototxt").write_text('name: "n"\n')
    monkeypatch.setenv(VARIABLE, str(models))
    path, _ = page(tmp_path / "page", PUBLIC_MODELS_PAGE)
    workdir = prepare_workdir(REPO, tmp_path / "scratch")
    assert (workdir / "models" / "net.prototxt").is_file() and (workdir / "examples" / "mnist").is_dir()
    report = run_page(path, workdir, REPO)
    assert [block.line for block in report.ran] == [1, 6] and not report.skipped


def test_without_the_variable_a_public_models_block_is_skipped_naming_it(tmp_path, monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    path, _ = page(tmp_path / "page", PUBLIC_MODELS_PAGE)
    workdir = prepare_workdir(REPO, tmp_path / "scratch")
    assert not (workdir / "models").exists()
    report = run_page(path, workdir, REPO)
    assert [block.line for block in report.ran] == [1]
    assert [(block.line, block.skip_reason) for block in report.skipped] == [(6, SKIP_REASON)]


@pytest.mark.parametrize(("text", "error"), [
    ("'''bash\nls\n'''\n", "fence language 'bash' is not one of"),
    ("'''\nls\n'''\n", r"fence language '\(none\)'"),
    ("<!-- docs-test: skip: why -->\nprose\n'''python\nx\n'''\n", "directly before a fenced block"),
    ("<!-- docs-test: public-models -->\nprose\n'''python\nx\n'''\n", "directly before a fenced block"),
    ("<!-- docs-test: skip: -->\n'''python\nx\n'''\n", "must give its reason"),
    ("'''python\nx = 1\n", "code fence never closed"),
    ("text\n\n    code\n", "indented code block at line 6"),
])
def test_pages_breaking_the_rules_fail_before_anything_runs(tmp_path, text, error):
    path, workdir = page(tmp_path, "'''console\n$ touch ran\n'''\n" + text)
    with pytest.raises(PageError, match=error):
        run_page(path, workdir, REPO)
    assert not (workdir / "ran").exists()
