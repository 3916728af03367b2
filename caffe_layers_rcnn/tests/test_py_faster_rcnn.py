"""py-faster-rcnn's Python ProposalLayer: param_str, TRAIN/TEST configuration, and use through a net."""

import sys
import textwrap

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_layers_rcnn.anchors import generate_anchors
from caffe_layers_rcnn.inisis_proposals import inisis_anchors, inisis_propose
from caffe_layers_rcnn.py_faster_rcnn import ProposalLayer, parse_param_str
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
    param = caffe_pb2.LayerParameter(type="Python", phase=phase)
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
