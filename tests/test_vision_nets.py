"""Whole public vision nets (LeNet, CIFAR-10 quick, CaffeNet, AlexNet, GoogLeNet, from the folder
CAFFE_PUBLIC_MODELS names) build with Caffe's shapes and run forward at batch 1."""

import json

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing.public_models import public_model

NETS = {
    "lenet": "bvlc__examples__mnist__lenet.json",
    "cifar10_quick": "bvlc__examples__cifar10__cifar10_quick.json",
    "caffenet": "bvlc__models__bvlc_reference_caffenet__deploy.json",
    "alexnet": "bvlc__models__bvlc_alexnet__deploy.json",
    "googlenet": "bvlc__models__bvlc_googlenet__deploy.json",
}


def load(name: str) -> tuple[Net, dict]:
    """The named deploy net in TEST phase, and the blob and param shapes Caffe gives it."""
    expected = json.loads(public_model(f"shapes/{NETS[name]}").read_text())
    return Net(public_model(expected["file"]), phase=caffe_pb2.TEST), expected


@pytest.mark.parametrize("name", NETS)
def test_builds_with_caffes_shapes(name):
    net, expected = load(name)
    assert {blob: list(net.blob_by_name(blob).shape) for blob in expected["blobs"]} == expected["blobs"]
    params = {layer: [list(b.shape) for b in net.layer_by_name(layer).blobs] for layer in expected["params"]}
    assert params == expected["params"]


@pytest.mark.parametrize("name", NETS)
def test_forward_at_batch_one(name):
    net, expected = load(name)
    rng = np.random.default_rng(0)
    # Tiling one random vector fills the 60M weights of the big nets fast; a prime length avoids patterns.
    values = rng.standard_normal(100_003, dtype=np.float32)
    for layer in net.layers:
        for blob in layer.blobs:
            fan_in = blob.count // blob.shape[0] if blob.num_axes > 1 else 1
            blob.mutable_cpu_data()[...] = np.resize(values, blob.shape) / np.sqrt(fan_in)
    data = net.blob_by_name("data")
    data.reshape((1, *data.shape[1:]))
    net.reshape()
    data.mutable_cpu_data()[...] = rng.normal(0, 1, data.shape)
    net.forward()
    for blob, shape in expected["blobs"].items():
        assert list(net.blob_by_name(blob).shape) == [1, *shape[1:]]
        assert np.isfinite(net.blob_by_name(blob).cpu_data()).all(), blob
    prob = net.blob_by_name("prob").cpu_data()
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-5)
    assert prob.std() > 0
