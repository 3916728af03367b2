"""Every public net that BVLC Caffe builds in TEST phase builds here with Caffe's blob and param shapes (the
shapes/ JSON files of the public-models folder CAFFE_PUBLIC_MODELS names)."""

import json

import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing.public_models import public_model, public_model_params


@pytest.mark.parametrize("case", public_model_params("shapes/*.json"))
def test_net_infers_caffes_shapes(case):
    expected = json.loads(case.read_text())
    assert expected["phase"] == "TEST"
    net = Net(public_model(expected["file"]), phase=caffe_pb2.TEST)
    blobs = {name: list(net.blob_by_name(name).shape) for name in expected["blobs"]}
    assert blobs == expected["blobs"]
    params = {name: [list(b.shape) for b in net.layer_by_name(name).blobs] for name in expected["params"]}
    assert params == expected["params"]
