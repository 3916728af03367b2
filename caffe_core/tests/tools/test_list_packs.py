"""caffe-packs: one block per installed layer pack, or a line saying there are none."""

from __future__ import annotations

from caffe_core.registry import PackInfo
from caffe_core.tools import list_packs


def test_each_pack_prints_name_version_count_and_types(capsys, monkeypatch):
    packs = [PackInfo("caffe-a", "1.2", ("Conv", "Pool")), PackInfo("caffe-b", "0.1", ("Loss",))]
    monkeypatch.setattr(list_packs, "installed_packs", lambda: packs)
    assert list_packs.main([]) == 0
    assert capsys.readouterr().out == ("caffe-a 1.2 (2 layer types)\n  Conv, Pool\n"
                                       "caffe-b 0.1 (1 layer types)\n  Loss\n")


def test_no_packs(capsys, monkeypatch):
    monkeypatch.setattr(list_packs, "installed_packs", lambda: [])
    assert list_packs.main([]) == 0
    assert capsys.readouterr().out == "no layer packs installed\n"
