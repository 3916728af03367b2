"""caffe-packs: one block per installed layer pack, or a line saying there are none."""

from __future__ import annotations

from caffe_core.params import SchemaAddition
from caffe_core.registry import PackInfo
from caffe_core.tools import list_packs


def test_each_pack_prints_name_version_count_types_variants_and_schema(capsys, monkeypatch):
    packs = [PackInfo("caffe-a", "1.2", ("Conv", "Pool", "Up"), {"Up": ("nearest", "unpool")}),
             PackInfo("caffe-b", "0.1", ("Loss",))]
    additions = [SchemaAddition("caffe-a", "up_param", "block", 500),
                 SchemaAddition("caffe-a", "PoolingParameter.ceil_mode", "alias", None),
                 SchemaAddition("caffe-b", "DropoutParameter.keep", "field", 2)]
    monkeypatch.setattr(list_packs, "installed_packs", lambda: packs)
    monkeypatch.setattr(list_packs, "installed_additions", lambda: additions)
    assert list_packs.main([]) == 0
    assert capsys.readouterr().out == ("caffe-a 1.2 (3 layer types)\n  Conv, Pool, Up [nearest, unpool]\n"
                                       "  parameter blocks: up_param (500)\n"
                                       "  aliases: PoolingParameter.ceil_mode\n"
                                       "caffe-b 0.1 (1 layer types)\n  Loss\n"
                                       "  fields: DropoutParameter.keep (2)\n")


def test_no_packs(capsys, monkeypatch):
    monkeypatch.setattr(list_packs, "installed_packs", lambda: [])
    monkeypatch.setattr(list_packs, "installed_additions", lambda: [])
    assert list_packs.main([]) == 0
    assert capsys.readouterr().out == "no layer packs installed\n"
