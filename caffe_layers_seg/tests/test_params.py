"""The pack's blocks: they parse from prototxt text, keep the forks' field numbers and defaults, survive a
binary round trip at their LayerParameter number, and a layer serialised with that number parses back."""

import pytest

from caffe_core import proto_io
from caffe_core.errors import PrototxtError
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block, has_param_block
from caffe_layers_seg import params, wire

BLOCKS = [
    ("bn_param", 1111, "bn_param { slope_filler { type: 'constant' value: 1 } momentum: 0.95 eps: 1e-4 "
                       "frozen: true engine: CAFFE }"),
    ("bn_param", 1111, "bn_param { scale_filler { type: 'constant' value: 1 } "
                       "shift_filler { type: 'constant' } bn_mode: INFERENCE }"),
    ("upsample_param", 500, "upsample_param { scale: 2 dims_num: 3 }"),
    ("upsample_param", 500, "upsample_param { scale_h: 2 scale_w: 3 pad_out_h: true pad_out_w: true "
                            "upsample_h: 45 upsample_w: 60 }"),
    ("interp_param", 2143, "interp_param { height: 11 width: 9 zoom_factor: 2 shrink_factor: 3 pad_beg: -1 "
                           "pad_end: -2 }"),
    ("max_unpool_param", 506, "max_unpool_param { dst_h: 6 dst_w: 8 }"),
    ("bilinear_interpolate_param", 505, "bilinear_interpolate_param { dst_h: 7 dst_w: 9 scale_factor: 2 "
                                        "align_corners: false }"),
    ("resize_param", 251, "resize_param { height: 8 width: 10 is_pyramid_test: true out_height_scale: 0.5 "
                          "out_width_scale: 2 }"),
    ("pixelshuffle_param", 507, "pixelshuffle_param { upscale_factor: 2 }"),
    ("pad_param", 504, "pad_param { pad_type: REFLECT pad_u: 2 pad_d: 1 pad_l: 2 pad_r: 3 pad_value: 1.5 }"),
    ("dense_image_data_param", 46, "dense_image_data_param { source: 'list.txt' batch_size: 4 rand_skip: 2 "
                                   "shuffle: true new_height: 360 new_width: 480 is_color: false "
                                   "mean_file: 'm.binaryproto' root_folder: 'data/' mirror: true "
                                   "crop_width: 300 crop_height: 200 }"),
    # crfasrnn
    ("multi_stage_meanfield_param", 2146, "multi_stage_meanfield_param { num_iterations: 10 "
                                          "compatibility_mode: POTTS threshold: 2 theta_alpha: 160 "
                                          "theta_beta: 3 theta_gamma: 3 spatial_filter_weight: 3 "
                                          "bilateral_filter_weight: 5 forced_spatial_filter_weight: 1 "
                                          "forced_bilateral_filter_weight: 2 }"),
    # PSANet
    ("pointwise_spatial_attention_param", 1001,
     "pointwise_spatial_attention_param { attention_mask_height: 5 attention_mask_width: 7 "
     "normalization_factor: 2.5 is_softmax: true psa_type: DISTRIBUTE }"),
]


def layer_of(text: str) -> caffe_pb2.LayerParameter:
    """A LayerParameter parsed from text."""
    return proto_io.parse_text(f"name: 'l' {text}", caffe_pb2.LayerParameter())


def numbers(data: bytes) -> list[int]:
    """The top-level field numbers of a serialised message."""
    return [number for number, _, _ in wire.top_level_fields(data)]


@pytest.mark.parametrize(("block", "number", "text"), BLOCKS)
def test_block_round_trips_in_text_and_binary_at_the_fork_number(block, number, text):
    layer = layer_of(text)
    assert has_param_block(layer, block)
    assert proto_io.parse_text(proto_io.to_text(layer), caffe_pb2.LayerParameter()) == layer
    data = layer.SerializeToString()
    assert number in numbers(data)
    assert proto_io.parse_binary(data, caffe_pb2.LayerParameter()) == layer


@pytest.mark.parametrize(("block", "number", "text"), BLOCKS)
def test_a_layer_written_with_the_fork_number_parses_back(block, number, text):
    message = get_param_block(layer_of(text), block)
    data = wire.length_delimited(1, b"l") + wire.length_delimited(number, message.SerializeToString())
    parsed = proto_io.parse_binary(data, caffe_pb2.LayerParameter())
    assert parsed.name == "l"
    assert get_param_block(parsed, block) == message


def test_bn_param_merges_pspnet_and_segnet_fields_at_their_numbers():
    fields = {f.name: (f.number, f.default_value) for f in params.BNParameter.DESCRIPTOR.fields}
    assert fields == {"slope_filler": (1, None), "bias_filler": (2, None),
                      "momentum": (3, pytest.approx(0.9)), "eps": (4, pytest.approx(1e-5)),
                      "frozen": (5, False), "engine": (6, 0),
                      "scale_filler": (101, None), "shift_filler": (102, None), "bn_mode": (103, 0)}
    assert dict(params.BNParameter.Engine.items()) == {"DEFAULT": 0, "CAFFE": 1, "CUDNN": 2}
    assert dict(params.BNParameter.BNMode.items()) == {"LEARN": 0, "INFERENCE": 1}
    segnet = get_param_block(layer_of("bn_param { bn_mode: INFERENCE }"), "bn_param")
    assert numbers(segnet.SerializeToString()) == [103]


def test_upsample_param_merges_inisis_and_segnet_fields():
    fields = {f.name: f.number for f in params.UpsampleParameter.DESCRIPTOR.fields}
    assert fields == {"scale": 1, "dims_num": 2, "scale_w": 3, "pad_out_h": 4, "pad_out_w": 5,
                      "upsample_h": 6, "upsample_w": 7, "scale_h": 8}
    block = params.UpsampleParameter()
    assert (block.scale, block.HasField("scale"), block.dims_num) == (0, False, 4)


@pytest.mark.parametrize(("message", "defaults"), [
    (params.InterpParameter, {"height": 0, "width": 0, "zoom_factor": 1, "shrink_factor": 1, "pad_beg": 0,
                              "pad_end": 0}),
    (params.BilinearInterpolateParameter, {"scale_factor": 1.0, "align_corners": True}),
    (params.ResizeParameter, {"is_pyramid_test": False}),
    (params.PadParameter, {"pad_type": params.PadParameter.CONSTANT, "pad_u": 0, "pad_value": 0.0}),
])
def test_defaults_are_the_forks(message, defaults):
    block = message()
    assert {name: getattr(block, name) for name in defaults} == defaults


def test_dense_image_data_param_is_segnets_message():
    fields = {f.name: (f.number, f.default_value) for f in params.DenseImageDataParameter.DESCRIPTOR.fields}
    assert fields == {"source": (1, ""), "batch_size": (2, 0), "rand_skip": (3, 0), "shuffle": (4, False),
                      "new_height": (5, 0), "new_width": (6, 0), "is_color": (7, True), "mean_file": (8, ""),
                      "root_folder": (9, ""), "mirror": (10, False), "crop_width": (11, 0),
                      "crop_height": (12, 0)}
    block = get_param_block(layer_of("dense_image_data_param { source: 'a' crop_height: 2 crop_width: 3 }"),
                            "dense_image_data_param")
    assert numbers(block.SerializeToString()) == [1, 11, 12]


# crfasrnn
def test_multi_stage_meanfield_param_is_torrvisions_message():
    fields = {f.name: (f.number, f.default_value)
              for f in params.MultiStageMeanfieldParameter.DESCRIPTOR.fields}
    assert fields == {"compatibility_mode": (1, 0), "threshold": (2, 0.0), "theta_alpha": (3, 10.0),
                      "theta_beta": (4, 10.0), "theta_gamma": (5, 10.0), "num_iterations": (6, 1),
                      "spatial_filter_weight": (7, 1.0), "bilateral_filter_weight": (8, 1.0),
                      "forced_spatial_filter_weight": (9, 0.0), "forced_bilateral_filter_weight": (10, 0.0)}
    assert dict(params.MultiStageMeanfieldParameter.Mode.items()) == {"POTTS": 0}
    block = get_param_block(layer_of("multi_stage_meanfield_param { theta_beta: 3 num_iterations: 5 }"),
                            "multi_stage_meanfield_param")
    assert numbers(block.SerializeToString()) == [4, 6]


def test_pad_types_are_inisis_values():
    assert dict(params.PadParameter.PadType.items()) == {"CONSTANT": 0, "REPLICATE": 1, "REFLECT": 2}


def test_a_field_the_block_lacks_is_refused():
    with pytest.raises(PrototxtError, match='no field named "kernel_size"'):
        layer_of("upsample_param { kernel_size: 2 }")


# PSANet
def test_pointwise_spatial_attention_param_is_psanets_message():
    fields = {f.name: (f.number, f.default_value)
              for f in params.PointwiseSpatialAttentionParameter.DESCRIPTOR.fields}
    assert fields == {"attention_mask_height": (1, 0), "attention_mask_width": (2, 0),
                      "normalization_factor": (3, 0.0), "is_softmax": (4, False), "psa_type": (5, 0)}
    assert dict(params.PointwiseSpatialAttentionParameter.PSAType.items()) == {"COLLECT": 0, "DISTRIBUTE": 1}
    block = params.PointwiseSpatialAttentionParameter()
    assert not block.HasField("attention_mask_height") and not block.HasField("normalization_factor")
