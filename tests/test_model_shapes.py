"""Every shared net that BVLC Caffe builds in TEST phase builds here with Caffe's blob and param shapes."""

import json
import pathlib

import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2

MODELS = pathlib.Path(__file__).parent / "models_shared"
CASES = sorted((MODELS / "shapes").glob("*.json"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_net_infers_caffes_shapes(case):
    expected = json.loads(case.read_text())
    assert expected["phase"] == "TEST"
    net = Net(MODELS / expected["file"], phase=caffe_pb2.TEST)
    blobs = {name: list(net.blob_by_name(name).shape) for name in expected["blobs"]}
    assert blobs == expected["blobs"]
    params = {name: [list(b.shape) for b in net.layer_by_name(name).blobs] for name in expected["params"]}
    assert params == expected["params"]
