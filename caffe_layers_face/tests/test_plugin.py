"""The plugin's hooks: each block at happynear/caffe-windows' LayerParameter number, InnerProductParameter's
`normalize` at its field 7; serialised layers carry those numbers."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_extra_field, get_param_block, installed_additions
from caffe_core.testing.wire import wire_field_numbers
from caffe_layers_face import plugin

# --- face_a: happynear's blocks and field
NUMBERS = {"flip_param": 212, "normalize_param": 214, "channel_scale_param": 237,
           "label_specific_add_param": 241}
FIELDS = {"InnerProductParameter.normalize": 7}
# --- end face_a


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: blocks[name].number for name in NUMBERS} == NUMBERS
    fields = plugin.caffe_message_fields()
    assert {name: fields[name].number for name in FIELDS} == FIELDS


def test_installed():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-face"}
    assert set(NUMBERS.items()) | set(FIELDS.items()) <= ours


@pytest.mark.parametrize(("text", "block", "number"), [
    ('name: "f" type: "Flip" flip_param { flip_height: true }', "flip_param", 212),
    ('name: "n" type: "Normalize" normalize_param { normalize_type: "L1" bp_norm: true }', "normalize_param",
     214),
    ('name: "c" type: "ChannelScale" channel_scale_param { global_scale: true }', "channel_scale_param", 237),
    ('name: "m" type: "LabelSpecificAdd" label_specific_add_param { bias: -0.35 }',
     "label_specific_add_param", 241),
])
def test_serialised_layers_carry_the_forks_numbers(text, block, number):
    layer = parse_text(text, caffe_pb2.LayerParameter())
    wire = layer.SerializeToString()
    assert number in wire_field_numbers(wire)
    again = caffe_pb2.LayerParameter.FromString(wire)
    assert get_param_block(again, block) == get_param_block(layer, block)


def test_defaults_are_the_forks():
    layer = parse_text('name: "x" type: "Flip"', caffe_pb2.LayerParameter())
    flip = get_param_block(layer, "flip_param")
    assert (flip.flip_width, flip.flip_height) == (True, False)
    norm = get_param_block(layer, "normalize_param")
    assert (norm.normalize_type, norm.fix_gradient, norm.bp_norm) == ("L2", False, False)
    scale = get_param_block(layer, "channel_scale_param")
    assert (scale.do_forward, scale.global_scale, scale.max_global_scale, scale.init_global_scale) == \
        (True, False, 1000.0, 1.0)
    add = get_param_block(layer, "label_specific_add_param")
    assert (add.bias, add.bias_power, add.transform_test, add.iteration) == (0.0, 1.0, False, 0)


def test_inner_product_normalize_field_number():
    text = 'name: "fc" type: "InnerProduct" inner_product_param { num_output: 2 normalize: true }'
    layer = parse_text(text, caffe_pb2.LayerParameter())
    assert get_extra_field(layer.inner_product_param, "normalize") is True
    assert 7 in wire_field_numbers(layer.inner_product_param.SerializeToString())
