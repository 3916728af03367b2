"""`.caffemodel` files written by a Caffe fork (the inisis fork's golden-case weights) load, their layers'
fork blocks decode at the fork's field numbers, and the files this project writes carry those numbers.
zhaoweicai/cascade-rcnn's files too: its roi_pooling_param sits at 147 (BVLC's swish_param), which this
project cannot give it, and its other blocks (150, 154, 155, 158) are written at its numbers."""

from pathlib import Path

import pytest

from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, has_param_block
from caffe_core.testing.wire import wire_field_numbers

ROOT = Path(__file__).resolve().parents[1]
# golden case, layer, block, the fork's LayerParameter number for it, one field of the block and its value
CASES = [
    pytest.param("caffe_layers_ssd/tests/golden/normalize_chan_scale", "norm", "norm_param", 206,
                 "channel_shared", False, marks=pytest.mark.requires_layer_types("Normalize"), id="ssd"),
    pytest.param("caffe_layers_seg/tests/golden/bn_test_phase", "bn", "bn_param", 1111, "frozen", False,
                 marks=pytest.mark.requires_layer_types("BN"), id="seg"),
]


@pytest.mark.parametrize(("case", "layer", "block", "number", "field", "value"), CASES)
def test_fork_written_weights_load_and_round_trip_at_the_forks_numbers(tmp_path, case, layer, block, number,
                                                                       field, value):
    folder = ROOT / case
    stored = next(lp for lp in read_net_binary(folder / "weights.caffemodel").layer if lp.name == layer)
    assert number in wire_field_numbers(stored.SerializeToString())
    assert has_param_block(stored, block) and getattr(get_param_block(stored, block), field) == value
    net = Net(folder / "net.prototxt")
    net.copy_trained_layers_from(folder / "weights.caffemodel")
    net.save(tmp_path / "again.caffemodel")
    written = next(lp for lp in read_net_binary(tmp_path / "again.caffemodel").layer if lp.name == layer)
    assert number in wire_field_numbers(written.SerializeToString())
    assert [list(b.data) for b in written.blobs] == [list(b.data) for b in stored.blobs]


CASCADE_WEIGHTS = ROOT / "caffe_layers_rcnn/tests/golden/cascade_fork_weights"


@pytest.mark.requires_layer_types("ROIPooling", "ROIAlign")
def test_a_cascade_rcnn_file_with_roi_pooling_param_at_147_loads_its_weights(tmp_path):
    from caffe_core.testing.golden import check_layer_case

    stored = {lp.name: lp for lp in read_net_binary(CASCADE_WEIGHTS / "weights.caffemodel").layer}
    for name in ("pool", "align"):
        numbers = wire_field_numbers(stored[name].SerializeToString())
        # The fork's block is at 147; read here it is BVLC's swish_param, not the pack's roi_pooling_param.
        assert 147 in numbers and 8266711 not in numbers
        assert stored[name].HasField("swish_param") and not has_param_block(stored[name], "roi_pooling_param")
    # The outcome: the convolution's weights load, the pooling layers keep the prototxt's settings, and the
    # outputs are the fork's (the golden case), with no error.
    net = Net(CASCADE_WEIGHTS / "net.prototxt", phase=caffe_pb2.TEST)
    net.copy_trained_layers_from(CASCADE_WEIGHTS / "weights.caffemodel")
    assert [list(b.data) for b in stored["conv"].blobs] == [list(b.cpu_data().ravel()) for b in
                                                             net.layer_by_name("conv").blobs]
    assert get_param_block(net.layer_by_name("pool").layer_param, "roi_pooling_param").pad_ratio == \
        pytest.approx(0.2)
    assert check_layer_case(CASCADE_WEIGHTS) == []
    # Written again here, the block goes to the pack's number (caffe-fast-rcnn's 8266711), not 147.
    net.save(tmp_path / "again.caffemodel")
    written = {lp.name: lp for lp in read_net_binary(tmp_path / "again.caffemodel").layer}
    assert 8266711 in wire_field_numbers(written["pool"].SerializeToString())
    assert 147 not in wire_field_numbers(written["pool"].SerializeToString())


CASCADE_NET = """
layer { name: "prob" type: "Input" top: "prob" input_param { shape { dim: 2 dim: 2 dim: 3 dim: 4 } } }
layer { name: "bbox" type: "Input" top: "bbox" input_param { shape { dim: 2 dim: 4 dim: 3 dim: 4 } } }
layer { name: "deltas" type: "Input" top: "deltas" input_param { shape { dim: 1 dim: 8 } } }
layer { name: "proposals" type: "BoxGroupOutput" bottom: "prob" bottom: "bbox" top: "rois"
  bbox_reg_param { bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0
                   bbox_std: 0.1 bbox_std: 0.1 bbox_std: 0.2 bbox_std: 0.2 }
  box_group_output_param { fg_thr: 0.3 min_size: 2 max_post_nms_num: 1
                           box_group_param { field_w: 8 field_h: 8 stride: 4 } } }
layer { name: "route" type: "ScaleRoute" bottom: "rois" top: "routed"
  scale_route_param { low_scale: 4 high_scale: 64 } }
layer { name: "decode" type: "DecodeBBox" bottom: "deltas" bottom: "routed" top: "boxes"
  bbox_reg_param { bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0
                   bbox_std: 0.05 bbox_std: 0.05 bbox_std: 0.1 bbox_std: 0.1 }
  decode_bbox_param { gt_iou_thr: 0.9 } }
"""


@pytest.mark.requires_layer_types("BoxGroupOutput", "ScaleRoute", "DecodeBBox")
def test_cascade_blocks_are_written_at_the_forks_numbers(tmp_path):
    net = Net(parse_text(CASCADE_NET, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    net.save(tmp_path / "cascade.caffemodel")
    written = {lp.name: lp for lp in read_net_binary(tmp_path / "cascade.caffemodel").layer}
    expected = {"proposals": {150: "bbox_reg_param", 158: "box_group_output_param"},
                "route": {154: "scale_route_param"},
                "decode": {150: "bbox_reg_param", 155: "decode_bbox_param"}}
    for name, blocks in expected.items():
        numbers = wire_field_numbers(written[name].SerializeToString())
        for number, block in blocks.items():
            assert number in numbers, f"{name}: {block} not at {number}"
            assert has_param_block(written[name], block)
    assert get_param_block(written["decode"], "decode_bbox_param").gt_iou_thr == pytest.approx(0.9)
    assert get_param_block(written["route"], "scale_route_param").high_scale == 64
    groups = get_param_block(written["proposals"], "box_group_output_param").box_group_param
    assert [(list(g.field_w), list(g.field_h), g.stride) for g in groups] == [([8], [8], 4)]
