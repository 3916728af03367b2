"""The core's index of published packs matches what this repository's packs declare (all are installed here),
and an unknown block or type names the pack that provides it."""

import json

import pytest

from caffe_core import pack_index
from caffe_core.errors import UnknownLayerTypeError
from caffe_core.registry import layer_class
from caffe_core.tools.caffe_packs import installed_index


def test_the_shipped_index_is_the_installed_packs_index():
    # Stale after a pack gains a type, block or field: regenerate it with
    # `caffe-packs index -o caffe_core/src/caffe_core/pack_index.json`.
    assert pack_index.known_index() == json.loads(json.dumps(installed_index()))


def test_each_block_has_one_pack_and_hints_name_it():
    index = pack_index.known_index()
    blocks = [block for entry in index.values() for block in entry["param_blocks"]]
    assert len(blocks) == len(set(blocks))
    assert pack_index.packs_providing("param_blocks", "prior_box_param") == ["caffe-layers-ssd"]
    assert pack_index.install_hint("layer_types", "ROIPooling") == (
        " (caffe-layers-rcnn provides it: pip install caffe-layers-rcnn)")
    assert pack_index.install_hint("param_blocks", "no_such_param") == ""


def test_an_unknown_type_names_the_pack_the_index_lists(monkeypatch):
    monkeypatch.setattr(pack_index, "known_index", lambda: {
        "caffe-layers-later": {"layer_types": ["NotYetHere"], "param_blocks": [], "fields": []}})
    with pytest.raises(UnknownLayerTypeError, match="caffe-layers-later provides it: pip"):
        layer_class("NotYetHere")
