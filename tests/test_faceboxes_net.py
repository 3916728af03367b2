"""FaceBoxes' deploy net (sfzhang15/FaceBoxes models/faceboxes/deploy.prototxt, read from the folder
CAFFE_FORK_MODELS names, as tests/test_public_fork_models.py reads it) with the SSD pack: every PriorBox is
FaceBoxes' (the densified layer makes the 256 and 512 ones FaceBoxes' too), 6400 priors at 640 x 480, and
a forward through DetectionOutput from seeded weights; the net up to DetectionOutput exports to ONNX."""

import os
import pathlib

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import randomise

ROOT = os.environ.get("CAFFE_FORK_MODELS")
DEPLOY = "sfzhang15+FaceBoxes/models/faceboxes/deploy.prototxt"
# Each PriorBox: feature map (H, W) of the 640 x 480 (H x W) image, priors per cell.
PRIOR_LAYERS = [(20, 15, 21), (10, 8, 1), (5, 4, 1)]

pytestmark = [
    pytest.mark.requires_layer_types("PriorBox", "Permute", "DetectionOutput"),
    pytest.mark.skipif(ROOT is None, reason="set CAFFE_FORK_MODELS to a folder of the forks' repositories "
                                            "(sfzhang15+FaceBoxes/ at b52cc92)"),
]


@pytest.fixture
def net():
    net = Net(pathlib.Path(ROOT or ".") / DEPLOY, phase=caffe_pb2.TEST)
    randomise(net, np.random.default_rng(1701))
    net.forward()
    return net


def test_every_priorbox_is_faceboxes(net):
    priorboxes = [layer for layer in net.layers if layer.type == "PriorBox"]
    assert [type(layer).__name__ for layer in priorboxes] == ["FaceBoxesPriorBoxLayer"] * 3
    assert [layer.num_priors for layer in priorboxes] == [count for _, _, count in PRIOR_LAYERS]
    total = sum(h * w * count for h, w, count in PRIOR_LAYERS)
    assert total == 6400
    assert net.blob_by_name("mbox_priorbox").shape == (1, 2, total * 4)
    assert net.blob_by_name("mbox_loc").shape == (1, total * 4)


def test_first_cell_priors_by_hand(net):
    """Cell (0, 0) of the 32-step layer, centre (16, 16): its first square at (16 - 16, 16 - 16) with half
    size 15.5, its last one (128) at (16, 16) with half size 63.5; the 256 layer's first: centre (32, 32),
    half size 127.5; normalised by W 480 and H 640."""
    priors = net.blob_by_name("mbox_priorbox").data[0, 0].reshape(-1, 4)
    scale = np.array([480, 640, 480, 640])
    np.testing.assert_allclose(priors[0] * scale, [-15.5, -15.5, 15.5, 15.5], atol=1e-4)
    np.testing.assert_allclose(priors[20] * scale, [16 - 63.5, 16 - 63.5, 16 + 63.5, 16 + 63.5], atol=1e-4)
    np.testing.assert_allclose(priors[6300] * scale, [32 - 127.5, 32 - 127.5, 32 + 127.5, 32 + 127.5],
                               atol=1e-4)


def test_detections(net):
    out = net.blob_by_name("detection_out")
    assert out.num_axes == 4 and out.shape[:2] == (1, 1) and out.shape[3] == 7
    assert 1 <= out.shape[2] <= 750  # keep_top_k
    rows = out.data[0, 0]
    assert np.all(rows[:, 0] == 0) and np.all(rows[:, 1] == 1)  # one image, one face class
    assert np.all(np.diff(rows[:, 2]) <= 0)  # one class: by score


def test_exports_to_onnx_up_to_detection_output():
    """DetectionOutput is refused (tests/test_public_fork_models.py); the net up to its bottoms exports, the
    three FaceBoxes PriorBoxes as Constants, and onnxruntime gives the net's outputs."""
    pytest.importorskip("onnxruntime")
    from caffe_core.proto_io import parse_text
    from caffe_core.testing.onnx_check import assert_onnx_matches

    path = pathlib.Path(ROOT or ".") / DEPLOY
    param = parse_text(path.read_text(), caffe_pb2.NetParameter(), source=str(path))
    assert param.layer[-1].type == "DetectionOutput"
    del param.layer[-1]
    net = Net(param, phase=caffe_pb2.TEST)
    randomise(net, np.random.default_rng(5))
    assert_onnx_matches(net)
