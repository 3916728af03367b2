"""The Proposal layer: inisis' C++ layer from proposal_param; shapes, batches, refusals, field numbers."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing.wire import field_bytes, wire_field_numbers, wire_fields
from caffe_layers_rcnn.inisis_proposals import inisis_anchors, inisis_propose
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings

ANCHORS = "ratio: 0.5 ratio: 1 ratio: 2 scale: 8 scale: 16 scale: 32"
PVANET = ("ratio: 0.5 ratio: 0.667 ratio: 1 ratio: 1.5 ratio: 2 scale: 3 scale: 6 scale: 9 scale: 16 "
          "scale: 32 pre_nms_topn: 300 post_nms_topn: 50 min_size: 16 nms_thresh: 0.6")


def layer_text(block=ANCHORS, tops=("rois",)):
    return ('name: "proposal" type: "Proposal" bottom: "cls" bottom: "bbox" bottom: "im_info" '
            + " ".join(f'top: "{t}"' for t in tops) + f" proposal_param {{ {block} }}")


def inputs(num_anchors, num=1, height=6, width=7, seed=0, im_info=(90, 110, 1.0)):
    rng = np.random.default_rng(seed)
    return [rng.random((num, 2 * num_anchors, height, width)),
            rng.normal(0, 0.2, (num, 4 * num_anchors, height, width)), np.array([im_info])]


def run(make_layer, blob_of, text, arrays):
    layer = make_layer(text, caffe_pb2.TEST)
    bottom = [blob_of(a) for a in arrays]
    top = [Blob() for _ in layer.layer_param.top]
    layer.setup(bottom, top)
    shapes_after_setup = [t.shape for t in top]
    layer.forward(bottom, top)
    return layer, top, shapes_after_setup


def expected(arrays, anchors, settings):
    return inisis_propose(*[a.astype(np.float32) for a in arrays], anchors, settings)


def test_batch_of_two_with_pvanet_parameters(make_layer, blob_of):
    arrays = inputs(25, num=2)
    layer, top, after_setup = run(make_layer, blob_of, layer_text(PVANET, ("rois", "scores")), arrays)
    # As the fork's Reshape: room for post_nms_topn rois per item until forward knows the count.
    assert after_setup == [(100, 5), (100,)]
    pvanet_anchors = inisis_anchors(16, [0.5, 0.667, 1, 1.5, 2], [3, 6, 9, 16, 32])
    np.testing.assert_array_equal(layer.anchors, pvanet_anchors)
    assert layer.settings == ProposalSettings(16, 300, 50, np.float32(0.6), 16)
    want_rois, want_scores = expected(arrays, layer.anchors, layer.settings)
    assert top[0].shape == want_rois.shape and top[1].shape == (want_rois.shape[0],)
    np.testing.assert_array_equal(top[0].cpu_data(), want_rois)
    np.testing.assert_array_equal(top[1].cpu_data(), want_scores)
    items = top[0].cpu_data()[:, 0]
    assert (items[:50] == 0).all() and (items[50:] == 1).all()


@pytest.mark.parametrize(("block", "base", "ratios", "scales", "settings"), [
    (ANCHORS, 16, (0.5, 1, 2), (8, 16, 32), ProposalSettings(16, 6000, 300, np.float32(0.7), 16)),
    ("feat_stride: 8 base_size: 8 min_size: 4 ratio: 1 ratio: 0.7 scale: 2 scale: 4 pre_nms_topn: 40 "
     "post_nms_topn: 12 nms_thresh: 0.5", 8, (1, 0.7), (2, 4),
     ProposalSettings(8, 40, 12, np.float32(0.5), 4)),
])
def test_every_parameter_reaches_the_algorithm(make_layer, blob_of, block, base, ratios, scales, settings):
    anchors = inisis_anchors(base, ratios, scales)
    arrays = inputs(len(anchors), im_info=(80, 100, 1.6))
    layer, top, _ = run(make_layer, blob_of, layer_text(block), arrays)
    np.testing.assert_array_equal(layer.anchors, anchors)
    assert layer.settings == settings
    want, _ = expected(arrays, anchors, settings)
    np.testing.assert_array_equal(top[0].cpu_data(), want)
    assert 0 < top[0].shape[0] <= settings.post_nms_topn


def test_small_boxes_keep_a_zero_score_whatever_im_info_scale(make_layer, blob_of):
    # Zero deltas give the 9 anchors of the one cell with x2, y2 one pixel out (the decoding's +1 width):
    # ratio 1 is 9, 17, 33 pixels wide, ratio 0.5 is 12 x 7, 24 x 12 (clipped at 0 to 20.5 x 12) and 46 x 24
    # (ratio 2 the same, turned). With min_size 16 the five boxes with a side below 16 stay, scored 0, last
    # (in enumeration order); the fork ignores im_info[2] = 6, which would filter all in py-faster-rcnn.
    arrays = [np.ones((1, 18, 1, 1)), np.zeros((1, 36, 1, 1)), np.array([[1000, 1000, 6.0]])]
    _, top, _ = run(make_layer, blob_of, layer_text(ANCHORS + " nms_thresh: 1", ("rois", "scores")), arrays)
    rois, scores = top[0].cpu_data(), top[1].cpu_data()
    assert len(rois) == 9
    np.testing.assert_array_equal(scores, [1] * 4 + [0] * 5)
    sides = np.minimum(rois[:, 3] - rois[:, 1], rois[:, 4] - rois[:, 2]) + 1
    assert (sides[:4] >= 16).all() and (sides[4:] < 16).all()
    np.testing.assert_array_equal(rois[4:, 1:], [[2.5, 5, 13.5, 11], [0, 2.5, 19.5, 13.5], [4, 4, 12, 12],
                                                 [5, 2.5, 11, 13.5], [2.5, 0, 13.5, 19.5]])


def test_reshape_and_forward_again(make_layer, blob_of):
    arrays = inputs(9, num=2)
    layer, top, _ = run(make_layer, blob_of, layer_text(tops=("rois", "scores")), arrays)
    first = top[0].cpu_data().copy()
    bottom = [blob_of(a) for a in arrays]
    layer.reshape(bottom, top)
    assert [t.shape for t in top] == [(600, 5), (600,)]
    layer.forward(bottom, top)
    np.testing.assert_array_equal(top[0].cpu_data(), first)


@pytest.mark.parametrize(("block", "words"), [
    ("scale: 8", "proposal_param.ratio is empty"),
    ("ratio: 1", "proposal_param.scale is empty"),
    ("", "proposal_param.ratio is empty"),
    (ANCHORS + " feat_stride: 0", "proposal_param.feat_stride must be > 0"),
    (ANCHORS + " base_size: 0", "proposal_param.base_size must be > 0"),
    (ANCHORS + " pre_nms_topn: 0", "proposal_param.pre_nms_topn must be > 0"),
    (ANCHORS + " post_nms_topn: 0", "proposal_param.post_nms_topn must be > 0"),
    ("ratio: 1 ratio: 0 scale: 8", r"proposal_param.ratio values must be > 0"),
    ("ratio: 1 scale: -8", r"proposal_param.scale values must be > 0"),
])
def test_refuses_bad_parameters(make_layer, blob_of, block, words):
    with pytest.raises(LayerSetupError, match=words):
        run(make_layer, blob_of, layer_text(block), inputs(9))


@pytest.mark.parametrize(("arrays", "words"), [
    ([np.ones((2, 18, 3, 3)), np.ones((1, 36, 3, 3)), np.ones((1, 3))], "same num"),
    ([np.ones((1, 12, 3, 3)), np.ones((1, 36, 3, 3)), np.ones((1, 3))], "18 channels"),
    ([np.ones((1, 18, 3, 3)), np.ones((1, 36, 3, 3)), np.ones((1, 1))], "im_info"),
    ([np.ones((1, 18, 3, 3)), np.ones((1, 36, 9)), np.ones((1, 3))],
     r"bottom 1 must have 4 axes, got shape \[1, 36, 9\]"),
])
def test_refuses_bad_bottoms(make_layer, blob_of, arrays, words):
    with pytest.raises(LayerSetupError, match=words):
        run(make_layer, blob_of, layer_text(), arrays)


def test_refuses_wrong_blob_counts(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="at most 2 top"):
        run(make_layer, blob_of, layer_text(tops=("a", "b", "c")), inputs(9))


def test_param_block_text_and_wire_number():
    param = parse_text(layer_text("feat_stride: 8 ratio: 0.5 ratio: 2 scale: 4 nms_thresh: 0.6"),
                       caffe_pb2.LayerParameter())
    block = get_param_block(param, "proposal_param")
    assert (block.feat_stride, list(block.ratio), list(block.scale)) == (8, [0.5, 2], [4])
    data = param.SerializeToString()
    assert 1000 in wire_field_numbers(data)
    assert set(wire_fields(wire_fields(data)[1000][0])) == {1, 4, 5, 8}
    back = caffe_pb2.LayerParameter.FromString(data)
    assert list(get_param_block(back, "proposal_param").ratio) == [0.5, 2]
    fork = field_bytes(1000, bytes([0x08, 32, 0x38, 100]))
    block = get_param_block(caffe_pb2.LayerParameter.FromString(fork), "proposal_param")
    assert (block.feat_stride, block.post_nms_topn, block.pre_nms_topn) == (32, 100, 6000)


@pytest.mark.gpu
def test_gpu_mode_falls_back_to_the_host_code(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(tops=("rois", "scores")), inputs(9, num=2), phase=caffe_pb2.TEST,
                    propagate_down=[False, False, False])
