"""py-faster-rcnn's Python ProposalLayer: param_str, TRAIN/TEST configuration, and use through a net."""

import sys
import textwrap

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing.golden import check_layer_case
from caffe_layers_rcnn.anchors import generate_anchors
from caffe_layers_rcnn.inisis_proposals import inisis_anchors, inisis_propose
from caffe_layers_rcnn.py_faster_rcnn import CONFIG, ProposalLayer, parse_param_str
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings, propose


@pytest.mark.parametrize(("text", "parsed"), [
    ("'feat_stride': 16", {"feat_stride": 16}),
    ("'feat_stride': 16 \n'scales': !!python/tuple [4, 8, 16, 32]",
     {"feat_stride": 16, "scales": [4, 8, 16, 32]}),
    ("{'feat_stride': 8, 'scales': (8, 16)}", {"feat_stride": 8, "scales": (8, 16)}),
    ('feat_stride: 32\n"num_classes": 21', {"feat_stride": 32, "num_classes": 21}),
    ("", {}),
])
def test_parse_param_str(text, parsed):
    assert parse_param_str(text) == parsed


@pytest.mark.parametrize("text", ["feat_stride 16", "'feat_stride': sixteen", "[1, 2]"])
def test_parse_param_str_refuses(text):
    with pytest.raises(ValueError, match="param_str"):
        parse_param_str(text)


def make(param_str, phase, tops=1):
    param = caffe_pb2.LayerParameter(name="proposal", type="Python", phase=phase)
    param.python_param.param_str = param_str
    layer = ProposalLayer(param)
    top = [Blob() for _ in range(tops)]
    return layer, top


def bottoms(seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.random((1, 24, 9, 11)), rng.normal(0, 0.2, (1, 48, 9, 11)), np.array([[140, 170, 1.2]])]
    blobs = [Blob(a.shape) for a in arrays]
    for blob, array in zip(blobs, arrays, strict=True):
        blob.data[...] = array
    return blobs


@pytest.mark.parametrize(("phase", "config"), [
    (caffe_pb2.TEST, ProposalSettings(8, 6000, 300, 0.7, 16)),
    (caffe_pb2.TRAIN, ProposalSettings(8, 12000, 2000, 0.7, 16)),
])
def test_forward_uses_the_phases_configuration(phase, config):
    layer, top = make("'feat_stride': 8\n'scales': !!python/tuple [4, 8, 16, 32]", phase, tops=2)
    bottom = bottoms()
    layer.setup(bottom, top)
    assert [t.shape for t in top] == [(1, 5), (1, 1, 1, 1)]
    assert layer.settings == config
    layer.reshape(bottom, top)
    layer.forward(bottom, top)
    anchors = generate_anchors(scales=[4, 8, 16, 32])
    want_rois, want_scores = propose(bottom[0].data, bottom[1].data, bottom[2].data, anchors, config)
    np.testing.assert_array_equal(top[0].data, want_rois)
    np.testing.assert_array_equal(top[1].data, want_scores)
    layer.backward(top, [False] * 3, bottom)


def test_setup_refuses_a_missing_feat_stride():
    layer, top = make("'scales': [8]", caffe_pb2.TEST)
    with pytest.raises(ValueError, match="feat_stride"):
        layer.setup(bottoms(), top)


def test_reshape_refuses_wrong_channels():
    layer, top = make("'feat_stride': 16", caffe_pb2.TEST)
    with pytest.raises(ValueError, match="18 channels"):
        layer.setup(bottoms(), top)
        layer.reshape(bottoms(), top)


NET = """
input: "cls" input_shape { dim: 1 dim: 18 dim: 6 dim: 7 }
input: "bbox" input_shape { dim: 1 dim: 36 dim: 6 dim: 7 }
input: "im_info" input_shape { dim: 1 dim: 3 }
layer { name: "python" type: "Python" bottom: "cls" bottom: "bbox" bottom: "im_info" top: "py_rois"
        python_param { module: "rcnn_pack_shim.proposal_layer" layer: "ProposalLayer"
                       param_str: "'feat_stride': 16" } }
layer { name: "native" type: "Proposal" bottom: "cls" bottom: "bbox" bottom: "im_info" top: "rois"
        proposal_param { ratio: 0.5 ratio: 1 ratio: 2 scale: 8 scale: 16 scale: 32 } }
"""


@pytest.mark.requires_layer_types("Python")
def test_python_layer_in_a_net_is_py_faster_rcnn_and_the_proposal_type_is_inisis(tmp_path, monkeypatch):
    shim = tmp_path / "rcnn_pack_shim"
    shim.mkdir()
    (shim / "__init__.py").write_text("")
    (shim / "proposal_layer.py").write_text(textwrap.dedent("""
        from caffe_layers_rcnn.py_faster_rcnn import ProposalLayer  # noqa: F401
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rcnn_pack_shim", raising=False)
    (tmp_path / "net.prototxt").write_text(NET)
    net = Net(tmp_path / "net.prototxt", phase=caffe_pb2.TEST)
    rng = np.random.default_rng(3)
    net.blob_by_name("cls").data[...] = rng.random((1, 18, 6, 7))
    net.blob_by_name("bbox").data[...] = rng.normal(0, 0.2, (1, 36, 6, 7))
    net.blob_by_name("im_info").data[...] = [[90, 110, 1.0]]
    net.forward()
    bottom = [net.blob_by_name(name).cpu_data() for name in ("cls", "bbox", "im_info")]
    py_rois = net.blob_by_name("py_rois").cpu_data()
    assert py_rois.shape[1] == 5 and 0 < py_rois.shape[0] <= 300
    np.testing.assert_array_equal(py_rois, propose(*bottom, generate_anchors(), ProposalSettings())[0])
    # Same parameters, the C++ fork's algorithm: its anchors are 16 times smaller (scale 8 is 8 pixels wide).
    rois = net.blob_by_name("rois").cpu_data()
    fork_anchors = inisis_anchors(16, [0.5, 1, 2], [8, 16, 32])
    np.testing.assert_array_equal(rois, inisis_propose(*bottom, fork_anchors, ProposalSettings())[0])
    assert not np.array_equal(rois[:len(py_rois)], py_rois[:len(rois)])


# ----- PVANet (sanghoon/pva-faster-rcnn): its ProposalLayer also reads 'ratios' -----

PVANET = "{'feat_stride': 16, 'ratios': [0.333, 0.5, 0.667, 1, 1.5, 2, 3], 'scales': [2, 3, 5, 9, 16, 32]}"
PVANET_TRAIN = ("{'feat_stride': 16, 'num_classes': 21, 'ratios': [0.333, 0.5, 0.667, 1, 1.5, 2, 3], "
                "'scales': [2, 3, 5, 9, 16, 32]}")


def pvanet_bottoms(height=5, width=7, anchors=42):
    rng = np.random.default_rng(5)
    arrays = [rng.random((1, 2 * anchors, height, width)),
              rng.normal(0, 0.2, (1, 4 * anchors, height, width)), np.array([[80, 112, 1.0]])]
    blobs = [Blob(a.shape) for a in arrays]
    for blob, array in zip(blobs, arrays, strict=True):
        blob.data[...] = array
    return blobs


@pytest.mark.parametrize("param_str", [PVANET, PVANET_TRAIN])
def test_pvanet_param_str_builds_42_anchors_with_the_right_shapes(param_str):
    layer, top = make(param_str, caffe_pb2.TEST, tops=2)
    bottom = pvanet_bottoms()
    layer.setup(bottom, top)
    assert layer.anchors.shape == (42, 4)
    layer.reshape(bottom, top)
    layer.forward(bottom, top)
    rois, scores = top[0].data, top[1].data
    assert rois.shape[1] == 5 and scores.shape == (rois.shape[0], 1) and 0 < rois.shape[0] <= 300
    assert np.all(rois[:, 0] == 0) and np.all(np.diff(scores.ravel()) <= 0)


def test_pvanet_anchors_by_hand():
    """Ratio-major (all six scales of 0.333, then of 0.5, ...), sizes rounded as np.round."""
    anchors = generate_anchors(ratios=[0.333, 0.5, 0.667, 1, 1.5, 2, 3], scales=[2, 3, 5, 9, 16, 32])
    assert anchors.shape == (42, 4)
    # 0.333: w = round(sqrt(256 / 0.333)) = round(27.73) = 28, h = round(28 * 0.333) = round(9.32) = 9;
    # scale 2 makes 56 x 18 around (7.5, 7.5): x from 7.5 - 27.5 to 7.5 + 27.5, y from 7.5 - 8.5 to 7.5 + 8.5.
    np.testing.assert_array_equal(anchors[0], [-20, -1, 35, 16])
    # 0.5: w = round(22.63) = 23, h = round(11.5) = 12 (half to even); scale 3: 69 x 36.
    np.testing.assert_array_equal(anchors[7], [7.5 - 34, 7.5 - 17.5, 7.5 + 34, 7.5 + 17.5])
    # 1: 16 x 16, scale 32: 512 x 512 around (7.5, 7.5), the last of ratio 1's row (index 3 * 6 + 5).
    np.testing.assert_array_equal(anchors[23], [-248, -248, 263, 263])
    # 3: w = round(9.24) = 9, h = 27; scale 32: 288 x 864.
    np.testing.assert_array_equal(anchors[41], [7.5 - 143.5, 7.5 - 431.5, 7.5 + 143.5, 7.5 + 431.5])


@pytest.mark.parametrize(("param_str", "message"), [
    ("{'feat_stride': 16, 'ratio': [0.5, 1, 2]}", "layer 'proposal' .*param_str key 'ratio' is not one"),
    ("{'feat_stride': 16, 'base_size': 8}", "param_str key 'base_size' .*feat_stride, scales, ratios"),
    ("{'feat_stride': 16, 'ratios': 2}", "param_str 'ratios' must be a non-empty list, got 2"),
    ("{'feat_stride': 16, 'ratios': []}", "param_str 'ratios' must be a non-empty list"),
    ("{'feat_stride': 16, 'scales': [8, 0]}", "param_str 'scales' must hold positive numbers"),
    ("{'feat_stride': 16, 'ratios': ['1']}", "param_str 'ratios' must hold positive numbers"),
    ("{'ratios': [1]}", "layer 'proposal' .*must give 'feat_stride'"),
])
def test_setup_names_the_param_str_problem(param_str, message):
    layer, top = make(param_str, caffe_pb2.TEST)
    with pytest.raises(ValueError, match=message):
        layer.setup(pvanet_bottoms(), top)


@pytest.mark.parametrize(("param_str", "anchors", "message"), [
    # The old reading of PVANet's param_str (scales only): 6 scales x 3 default ratios.
    (PVANET, 18, r"bottom 0 \(rpn_cls_prob_reshape\) must have 2 x 42 anchors = 84 channels .*got shape "
                 r"\[1, 36, 5, 7\] \(param_str gives 7 ratios x 6 scales = 42 anchors per cell\)"),
    ("{'feat_stride': 16, 'scales': [2, 3, 5, 9, 16, 32]}", 42,
     r"layer 'proposal' .*2 x 18 anchors = 36 channels.*3 ratios x 6 scales = 18 anchors"),
])
def test_reshape_names_the_channel_mismatch(param_str, anchors, message):
    layer, top = make(param_str, caffe_pb2.TEST)
    bottom = pvanet_bottoms(anchors=anchors)
    layer.setup(bottom, top)
    with pytest.raises(ValueError, match=message):
        layer.reshape(bottom, top)


def test_reshape_names_a_wrong_delta_channel_count():
    layer, top = make(PVANET, caffe_pb2.TEST)
    bottom = pvanet_bottoms()
    bottom[1].reshape(1, 84, 5, 7)
    layer.setup(bottom, top)
    with pytest.raises(ValueError, match=r"bottom 1 \(rpn_bbox_pred\) must have 4 x 42 channels"):
        layer.reshape(bottom, top)


@pytest.mark.requires_layer_types("Python")
@pytest.mark.parametrize(("case", "overrides"), [
    ("pvanet_proposal_default_cfg", {}),
    ("pvanet_proposal_submit_cfg", {"pre_nms_topn": 12000, "post_nms_topn": 200}),
])
def test_golden_pvanet_proposal(golden_case, tmp_path, monkeypatch, case, overrides):
    """PVANet's own proposal_layer.py on seeded inputs (case.json says how), through a net."""
    rpn = tmp_path / "rpn"
    rpn.mkdir()
    (rpn / "__init__.py").write_text("")
    (rpn / "proposal_layer.py").write_text("from caffe_layers_rcnn.py_faster_rcnn import ProposalLayer\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("rpn", "rpn.proposal_layer"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    # What PVANet's test configuration (cfg_from_file of its yml) does to py-faster-rcnn's cfg.TEST.
    monkeypatch.setitem(CONFIG, caffe_pb2.TEST, {**CONFIG[caffe_pb2.TEST], **overrides})
    assert check_layer_case(golden_case(case)) == []
