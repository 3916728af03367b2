"""caffe-packs: the listing, `check`, `docs` and `new` commands."""

from __future__ import annotations

import ast

import pytest

from caffe_core.pack_check import Problem
from caffe_core.registry import PackInfo
from caffe_core.schema_extensions import SchemaAddition
from caffe_core.tools import caffe_packs


def test_each_pack_prints_name_version_count_types_variants_and_schema(capsys, monkeypatch):
    packs = [PackInfo("caffe-a", "1.2", ("Conv", "Pool", "Up"), {"Up": ("nearest", "unpool")}),
             PackInfo("caffe-b", "0.1", ("Loss",))]
    additions = [SchemaAddition("caffe-a", "up_param", "block", 500),
                 SchemaAddition("caffe-a", "PoolingParameter.ceil_mode", "alias", None),
                 SchemaAddition("caffe-b", "DropoutParameter.keep", "field", 2)]
    monkeypatch.setattr(caffe_packs, "installed_packs", lambda: packs)
    monkeypatch.setattr(caffe_packs, "installed_additions", lambda: additions)
    assert caffe_packs.main([]) == 0
    assert capsys.readouterr().out == ("caffe-a 1.2 (3 layer types)\n  Conv, Pool, Up [nearest, unpool]\n"
                                       "  parameter blocks: up_param (500)\n"
                                       "  aliases: PoolingParameter.ceil_mode\n"
                                       "caffe-b 0.1 (1 layer types)\n  Loss\n"
                                       "  fields: DropoutParameter.keep (2)\n")


def test_no_packs(capsys, monkeypatch):
    monkeypatch.setattr(caffe_packs, "installed_packs", lambda: [])
    monkeypatch.setattr(caffe_packs, "installed_additions", lambda: [])
    assert caffe_packs.main(["list"]) == 0
    assert capsys.readouterr().out == "no layer packs installed\n"


def test_check_prints_one_line_per_problem_and_fails(capsys):
    assert caffe_packs.main(["check"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("caffe-broken-testpack: layer type 'Broken' (caffe_broken_testpack.broken:"
                               "BrokenLayer) failed to import: ModuleNotFoundError")
    assert "caffe-zzz-testpack: layer type 'Twin' names ZZZLayer, whose type is 'ZZZ'" in lines
    assert any(line.startswith("caffe-rival-testpack, caffe-zzz-testpack: layer type 'Twin' is provided by")
               for line in lines)
    assert len(lines) == 3


def test_check_without_problems_sums_up(capsys, monkeypatch):
    monkeypatch.setattr("caffe_core.pack_check.installed_pack_problems", lambda: [])
    assert caffe_packs.main(["check"]) == 0
    assert capsys.readouterr().out.startswith("no problem: ")


def test_problem_text_names_its_distributions():
    assert str(Problem(("a", "b"), "clash")) == "a, b: clash"


def test_docs_writes_the_catalogue_and_checks_it(tmp_path, capsys):
    path = tmp_path / "catalogue.md"
    assert caffe_packs.main(["docs", "--check", str(path)]) == 1
    assert caffe_packs.main(["docs", "-o", str(path)]) == 0
    text = path.read_text()
    assert "### ZZZ" in text and "Variant `sum`: Two bottoms: top = bottom 0 + bottom 1." in text
    assert "- parameters: `zzz_param` (LayerParameter field 5000)\n\n| field | number | type |" in text
    assert "| `DropoutParameter.zzz_keep` | 7 | bool | true |" in text
    assert "| `PoolingParameter.zzz_ceil` | alias | | `true` is `round_mode: CEIL`; `false` is " in text
    assert "### Broken\n\nfails to import (caffe_broken_testpack.broken:BrokenLayer)" in text
    assert caffe_packs.main(["docs", "--check", str(path)]) == 0
    path.write_text(path.read_text() + "edited\n")
    assert caffe_packs.main(["docs", "--check", str(path)]) == 1
    assert f"{path} is stale" in capsys.readouterr().out


def test_new_writes_a_pack_that_names_its_type_block_and_number(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert caffe_packs.main(["new", "caffe-layers-abc", "--layer", "AbcScale", "--number", "123456"]) == 0
    root = tmp_path / "caffe-layers-abc"
    assert 'AbcScale = "caffe_layers_abc.abc_scale:AbcScaleLayer"' in (root / "pyproject.toml").read_text()
    assert "BLOCK_NUMBER = 123456" in (root / "src/caffe_layers_abc/plugin.py").read_text()
    for path in root.rglob("*.py"):
        ast.parse(path.read_text(), str(path))
    assert "pip install ./caffe-layers-abc" in capsys.readouterr().out
    assert caffe_packs.main(["new", "caffe-layers-abc", "--layer", "AbcScale"]) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "layer", "message"), [
    ("9-bad", "Abc", "must give a Python package name"),
    ("caffe-layers-ok", "Not A Type", "must be an identifier"),
])
def test_new_refuses_names_that_cannot_be_a_package_or_a_type(tmp_path, monkeypatch, capsys, name, layer,
                                                              message):
    monkeypatch.chdir(tmp_path)
    assert caffe_packs.main(["new", name, "--layer", layer]) == 2
    assert message in capsys.readouterr().err


def test_index_lists_published_packs_only_and_checks_a_file(tmp_path, capsys, monkeypatch):
    packs = [PackInfo("caffe-layers-a", "1.2", ("Conv", "Up"), {"Up": ("nearest",)}),
             PackInfo("caffe-zzz-testpack", "0.1", ("ZZZ",))]
    additions = [SchemaAddition("caffe-layers-a", "up_param", "block", 500),
                 SchemaAddition("caffe-layers-a", "PoolingParameter.ceil_mode", "alias", None),
                 SchemaAddition("caffe-layers-b", "DropoutParameter.keep", "field", 2),
                 SchemaAddition("caffe-zzz-testpack", "zzz_param", "block", 5000)]
    monkeypatch.setattr(caffe_packs, "installed_packs", lambda: packs)
    monkeypatch.setattr(caffe_packs, "installed_additions", lambda: additions)
    assert caffe_packs.installed_index() == {
        "caffe-layers-a": {"fields": ["PoolingParameter.ceil_mode"], "layer_types": ["Conv", "Up"],
                           "param_blocks": ["up_param"]},
        "caffe-layers-b": {"fields": ["DropoutParameter.keep"], "layer_types": [], "param_blocks": []}}
    path = tmp_path / "pack_index.json"
    assert caffe_packs.main(["index", "--check", str(path)]) == 1
    assert caffe_packs.main(["index", "-o", str(path)]) == 0
    assert caffe_packs.main(["index", "--check", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{path} is fresh"
