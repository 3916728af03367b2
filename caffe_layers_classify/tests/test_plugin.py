"""The pack's hooks: its parameter blocks at the forks' numbers, and DenseNet's ceil_mode as round_mode."""

import pytest

from caffe_core import proto_io
from caffe_core.errors import PrototxtError
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import FieldAlias, ParamBlock, installed_additions
from caffe_core.testing.golden import check_layer_case
from caffe_layers_classify import params, plugin

POOL = caffe_pb2.PoolingParameter


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: block.number for name, block in blocks.items()} == {
        "hardsigmoid_param": 501, "unsqueeze_param": 502, "relu6_param": 503, "shuffle_channel_param": 164}
    assert all(isinstance(block, ParamBlock) for block in blocks.values())
    assert blocks["shuffle_channel_param"].message is params.ShuffleChannelParameter


def test_ceil_mode_is_an_alias_of_round_mode():
    fields = plugin.caffe_message_fields()
    assert fields == {"PoolingParameter.ceil_mode": FieldAlias({"true": "round_mode: CEIL",
                                                                "false": "round_mode: FLOOR"})}


def test_installed_with_the_distribution():
    mine = {(a.key, a.kind, a.number) for a in installed_additions()
            if a.distribution == "caffe-layers-classify"}
    assert mine == {("hardsigmoid_param", "block", 501), ("unsqueeze_param", "block", 502),
                    ("relu6_param", "block", 503), ("shuffle_channel_param", "block", 164),
                    ("PoolingParameter.ceil_mode", "alias", None)}


@pytest.mark.parametrize(("value", "mode"), [("false", POOL.FLOOR), ("true", POOL.CEIL), ("0", POOL.FLOOR),
                                             ("True", POOL.CEIL)])
def test_ceil_mode_parses_as_round_mode(value, mode):
    text = f'name: "p" type: "Pooling" pooling_param {{ kernel_size: 3 stride: 2 ceil_mode: {value} }}'
    layer = proto_io.parse_text(text, caffe_pb2.LayerParameter())
    assert layer.pooling_param.HasField("round_mode")
    assert layer.pooling_param.round_mode == mode
    assert "ceil_mode" not in proto_io.to_text(layer)


def test_ceil_mode_refuses_other_values():
    with pytest.raises(PrototxtError, match="ceil_mode takes true or false"):
        proto_io.parse_text("pooling_param { ceil_mode: CEIL }", caffe_pb2.LayerParameter())


@pytest.mark.requires_layer_types("Pooling")
def test_golden_pooling_with_ceil_mode_false(golden_case):
    """The fork's MAX 3x3/2 pad 1 pooling of 7x8 with ceil_mode: false gives floor's 4x4 (ceil: 4x5)."""
    assert check_layer_case(golden_case("pool_max_ceil_mode_false")) == []
