"""The plugin's hooks: every block at its fork's LayerParameter number, inisis' BatchNormParameter fields 7-10
and SegNet's DropoutParameter.sample_weights_test (at 1002) as extensions of Caffe's messages."""

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import ParamBlock, get_extra_field, has_extra_field
from caffe_layers_seg import plugin, wire


def test_blocks_take_the_forks_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: block.number for name, block in blocks.items()} == {
        "bn_param": 1111, "upsample_param": 500, "interp_param": 2143, "max_unpool_param": 506,
        "bilinear_interpolate_param": 505, "resize_param": 251, "pixelshuffle_param": 507, "pad_param": 504,
        "dense_image_data_param": 46,
        "multi_stage_meanfield_param": 2146, "pointwise_spatial_attention_param": 1001}
    assert all(isinstance(block, ParamBlock) for block in blocks.values())
    assert blocks["bn_param"].message.DESCRIPTOR.name == "BNParameter"


def test_batch_norm_fields_parse_and_keep_inisis_numbers():
    layer = proto_io.parse_text(
        "name: 'k' type: 'BatchNormKyle' batch_norm_param { eps: 1e-3 "
        "weight_filler { type: 'constant' value: 1 } bias_filler { type: 'constant' } use_alpha_beta: true "
        "do_all_reduce: true }", caffe_pb2.LayerParameter())
    param = layer.batch_norm_param
    assert get_extra_field(param, "use_alpha_beta") is True
    assert get_extra_field(param, "do_all_reduce") is True
    assert get_extra_field(param, "weight_filler").value == 1
    assert has_extra_field(param, "bias_filler")
    data = param.SerializeToString()
    assert [number for number, _, _ in wire.top_level_fields(data)] == [3, 7, 8, 9, 10]
    assert proto_io.parse_binary(data, caffe_pb2.BatchNormParameter()) == param


def test_batch_norm_field_defaults():
    param = caffe_pb2.BatchNormParameter()
    assert get_extra_field(param, "use_alpha_beta") is False
    assert get_extra_field(param, "do_all_reduce") is False
    assert not has_extra_field(param, "weight_filler")


def test_sample_weights_test_parses_and_sits_at_1002():
    layer = proto_io.parse_text("name: 'd' type: 'Dropout' dropout_param { dropout_ratio: 0.5 "
                                "sample_weights_test: true }", caffe_pb2.LayerParameter())
    param = layer.dropout_param
    assert get_extra_field(param, "sample_weights_test") is True
    data = param.SerializeToString()
    assert [number for number, _, _ in wire.top_level_fields(data)] == [1, 1002]
    assert proto_io.parse_binary(data, caffe_pb2.DropoutParameter()) == param
    assert proto_io.parse_binary(layer.SerializeToString(), caffe_pb2.LayerParameter()) == layer


def test_sample_weights_test_defaults_to_false():
    param = caffe_pb2.DropoutParameter()
    assert get_extra_field(param, "sample_weights_test") is False
    assert not has_extra_field(param, "sample_weights_test")
