"""The SSD messages: the ssd branch's fields, numbers, defaults and enums; text parsing; binary round trips
with the fork's LayerParameter and TransformationParameter numbers on the wire."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_binary, parse_text
from caffe_core.schema_extensions import get_extra_field, get_param_block, has_param_block
from caffe_core.testing.wire import field_bytes, wire_field_numbers
from caffe_layers_ssd import params
from caffe_layers_ssd.params import signed_label

BLOCKS = {
    "annotated_data_param": (200, "batch_sampler { sampler { min_scale: 0.3 } max_trials: 50 } "
                                  "label_map_file: 'labelmap_voc.prototxt' anno_type: BBOX"),
    "multibox_loss_param": (201, "loc_loss_type: L2 conf_loss_type: LOGISTIC num_classes: 21 "
                                 "match_type: BIPARTITE mining_type: HARD_EXAMPLE code_type: CENTER_SIZE "
                                 "nms_param { nms_threshold: 0.5 top_k: 10 } sample_size: 32"),
    "permute_param": (202, "order: 0 order: 2 order: 3 order: 1"),
    "prior_box_param": (203, "min_size: 30 max_size: 60 aspect_ratio: 2 flip: true clip: false "
                             "variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 step: 8 offset: 0.5"),
    "detection_output_param": (204, "num_classes: 21 share_location: true background_label_id: 0 "
                                    "nms_param { nms_threshold: 0.45 top_k: 400 eta: 0.9 } "
                                    "save_output_param { output_directory: 'out' output_format: 'VOC' "
                                    "resize_param { resize_mode: WARP height: 300 width: 300 } } "
                                    "code_type: CENTER_SIZE keep_top_k: 200 confidence_threshold: 0.01 "
                                    "save_file: 'x.avi'"),
    "detection_evaluate_param": (205, "num_classes: 21 background_label_id: 0 overlap_threshold: 0.5 "
                                      "evaluate_difficult_gt: false name_size_file: 'test_name_size.txt' "
                                      "resize_param { resize_mode: FIT_SMALL_SIZE height_scale: 2 }"),
    "norm_param": (206, "across_spatial: false scale_filler { type: 'constant' value: 20 } "
                        "channel_shared: false eps: 1e-8"),
    "video_data_param": (207, "video_type: VIDEO device_id: 1 video_file: 'a.mp4' skip_frames: 3"),
}


@pytest.mark.parametrize("name", BLOCKS)
def test_block_parses_and_round_trips_with_the_forks_number(name):
    number, body = BLOCKS[name]
    layer = parse_text(f"name: 'x' type: 'T' {name} {{ {body} }}", caffe_pb2.LayerParameter())
    block = get_param_block(layer, name)
    assert has_param_block(layer, name)
    assert parse_text(body, type(block)()) == block
    data = layer.SerializeToString()
    assert number in wire_field_numbers(data)
    back = parse_binary(data, caffe_pb2.LayerParameter())
    assert get_param_block(back, name) == block


@pytest.mark.parametrize("name", BLOCKS)
def test_bytes_written_with_the_forks_number_parse_back(name):
    number, body = BLOCKS[name]
    block = parse_text(body, type(get_param_block(caffe_pb2.LayerParameter(), name))())
    data = caffe_pb2.LayerParameter(name="x").SerializeToString() + field_bytes(
        number, block.SerializeToString())
    assert get_param_block(parse_binary(data, caffe_pb2.LayerParameter()), name) == block


TRANSFORM_FIELDS = {
    "resize_param": (8, "prob: 1 resize_mode: WARP height: 300 width: 300 interp_mode: LINEAR "
                        "interp_mode: AREA interp_mode: NEAREST interp_mode: CUBIC interp_mode: LANCZOS4"),
    "noise_param": (9, "prob: 0.1 saltpepper_param { fraction: 0.5 value: 0 } jpeg: 90"),
    "emit_constraint": (10, "emit_type: MIN_OVERLAP emit_overlap: 0.5"),
    "distort_param": (13, "brightness_prob: 0.5 brightness_delta: 32 contrast_prob: 0.5 contrast_lower: 0.5 "
                          "contrast_upper: 1.5 hue_prob: 0.5 hue_delta: 18 saturation_prob: 0.5 "
                          "saturation_lower: 0.5 saturation_upper: 1.5 random_order_prob: 0"),
    "expand_param": (14, "prob: 0.5 max_expand_ratio: 4"),
}


@pytest.mark.parametrize("name", TRANSFORM_FIELDS)
def test_transformation_fields_at_the_ssd_numbers(name):
    number, body = TRANSFORM_FIELDS[name]
    text = f"name: 'data' type: 'AnnotatedData' transform_param {{ mirror: true {name} {{ {body} }} }}"
    layer = parse_text(text, caffe_pb2.LayerParameter())
    value = get_extra_field(layer.transform_param, name)
    assert parse_text(body, type(value)()) == value
    assert layer.transform_param.mirror
    assert number in wire_field_numbers(layer.transform_param.SerializeToString())
    back = parse_binary(layer.SerializeToString(), caffe_pb2.LayerParameter())
    assert get_extra_field(back.transform_param, name) == value


def test_ssd_train_data_layer_parses():
    """The AnnotatedData layer of ssd_pascal.py's train net (its block and augmentation fields)."""
    text = """
    name: "data" type: "AnnotatedData" top: "data" top: "label"
    include { phase: TRAIN }
    transform_param {
      mirror: true mean_value: 104 mean_value: 117 mean_value: 123
      resize_param { prob: 1 resize_mode: WARP height: 300 width: 300
        interp_mode: LINEAR interp_mode: AREA interp_mode: NEAREST interp_mode: CUBIC interp_mode: LANCZOS4 }
      emit_constraint { emit_type: CENTER }
      distort_param { brightness_prob: 0.5 brightness_delta: 32 contrast_prob: 0.5 contrast_lower: 0.5
        contrast_upper: 1.5 hue_prob: 0.5 hue_delta: 18 saturation_prob: 0.5 saturation_lower: 0.5
        saturation_upper: 1.5 random_order_prob: 0 }
      expand_param { prob: 0.5 max_expand_ratio: 4 }
    }
    data_param { source: "trainval_lmdb" batch_size: 32 backend: LMDB }
    annotated_data_param {
      batch_sampler { max_sample: 1 max_trials: 1 }
      batch_sampler { sampler { min_scale: 0.3 max_scale: 1 min_aspect_ratio: 0.5 max_aspect_ratio: 2 }
        sample_constraint { min_jaccard_overlap: 0.1 } max_sample: 1 max_trials: 50 }
      label_map_file: "labelmap_voc.prototxt"
    }
    """
    layer = parse_text(text, caffe_pb2.LayerParameter())
    block = get_param_block(layer, "annotated_data_param")
    assert len(block.batch_sampler) == 2
    assert block.batch_sampler[1].sample_constraint.min_jaccard_overlap == pytest.approx(0.1)
    assert get_extra_field(layer.transform_param, "expand_param").max_expand_ratio == 4
    assert get_extra_field(layer.transform_param, "resize_param").height == 300


def test_defaults_are_the_ssd_branchs_but_clip_is_inisis():
    assert params.PriorBoxParameter().clip is True
    assert params.PriorBoxParameter().flip is True
    assert params.PriorBoxParameter().offset == pytest.approx(0.5)
    output = params.DetectionOutputParameter()
    assert (output.share_location, output.background_label_id, output.keep_top_k) == (True, 0, -1)
    assert output.code_type == params.PriorBoxParameter.CORNER
    assert output.nms_param.nms_threshold == pytest.approx(0.3) and output.nms_param.eta == 1
    loss = params.MultiBoxLossParameter()
    assert loss.loc_loss_type == params.MultiBoxLossParameter.SMOOTH_L1
    assert loss.match_type == params.MultiBoxLossParameter.PER_PREDICTION
    assert loss.mining_type == params.MultiBoxLossParameter.MAX_NEGATIVE
    assert (loss.neg_pos_ratio, loss.neg_overlap, loss.sample_size) == (3, 0.5, 64)
    assert params.NormalizeParameter().eps == pytest.approx(1e-10)
    assert params.DetectionEvaluateParameter().overlap_threshold == pytest.approx(0.5)
    assert params.ResizeParameter().resize_mode == params.ResizeParameter.WARP
    assert params.BatchSampler().max_trials == 100
    assert params.NoiseParameter().jpeg == -1
    assert params.VideoDataParameter().video_type == params.VideoDataParameter.WEBCAM


@pytest.mark.parametrize(("message", "numbers"), [
    (params.PriorBoxParameter, {"min_size": 1, "clip": 5, "offset": 13}),
    (params.DetectionOutputParameter, {"keep_top_k": 7, "variance_encoded_in_target": 8, "save_file": 12,
                                       "use_polygon": 13, "objectness_score": 24}),
    (params.DetectionEvaluateParameter, {"name_size_file": 5, "resize_param": 6}),
    (params.MultiBoxLossParameter, {"code_type": 14, "encode_variance_in_target": 16,
                                    "use_prior_for_nms": 23}),
    (params.SaveOutputParameter, {"num_test_image": 6, "resize_param": 7}),
    (params.ResizeParameter, {"pad_mode": 5, "interp_mode": 7, "height_scale": 8, "width_scale": 9}),
    (params.AnnotatedDataParameter, {"anno_type": 3}),
    (params.VideoDataParameter, {"skip_frames": 4}),
])
def test_field_numbers(message, numbers):
    fields = message.DESCRIPTOR.fields_by_name
    assert {name: fields[name].number for name in numbers} == numbers


def test_the_forks_detection_output_fields_and_their_defaults():
    """TextBoxes++'s use_polygon defaults to true, RefineDet's objectness_score to 0.01."""
    output = params.DetectionOutputParameter()
    assert output.use_polygon is True and not output.HasField("use_polygon")
    assert output.objectness_score == pytest.approx(0.01)


def test_multibox_loss_has_no_field_15():
    assert 15 not in params.MultiBoxLossParameter.DESCRIPTOR.fields_by_number


def test_signed_label():
    assert signed_label(0) == 0
    assert signed_label(20) == 20
    assert signed_label(2 ** 32 - 1) == -1


def test_textboxes_denser_prior_boxes_is_field_14():
    """TextBoxes++' PriorBoxParameter.denser_prior_boxes: field 14, bool, default false, on the wire at 14."""
    field = params.PriorBoxParameter.DESCRIPTOR.fields_by_name["denser_prior_boxes"]
    assert (field.number, params.PriorBoxParameter().denser_prior_boxes) == (14, False)
    block = parse_text("min_size: 30 denser_prior_boxes: true", params.PriorBoxParameter())
    assert 14 in wire_field_numbers(block.SerializeToString())
    assert parse_binary(block.SerializeToString(), params.PriorBoxParameter()).denser_prior_boxes is True
