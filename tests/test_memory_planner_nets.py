"""The memory planner on whole deploy nets (ours, and public ones from the folder CAFFE_PUBLIC_MODELS names):
the same outputs as the plain net, and a near-minimal footprint."""

import pathlib

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import read_text_file
from caffe_core.testing.public_models import public_model

REPO = pathlib.Path(__file__).resolve().parents[1]
OURS = {
    "lenet": REPO / "examples" / "mnist" / "lenet_deploy.prototxt",
    "branching": REPO / "tests" / "nets" / "branching_deploy.prototxt",
}
PUBLIC = {
    "caffenet": "bvlc/models/bvlc_reference_caffenet/deploy.prototxt",
    "googlenet": "bvlc/models/bvlc_googlenet/deploy.prototxt",
    "squeezenet_1.1": "external/squeezenet_v1.1_deploy.prototxt",
    "mobilenet_v1": "external/mobilenet_v1_deploy.prototxt",
    "resnet50": "external/resnet50_deploy.prototxt",
    "fcn8s": "external/fcn8s_voc_deploy.prototxt",
}


def deploy_file(name: str) -> pathlib.Path:
    """The named net's file: one of ours, or a public one (the test skips without CAFFE_PUBLIC_MODELS)."""
    return OURS[name] if name in OURS else public_model(PUBLIC[name])


def randomise(net: Net, rng: np.random.Generator) -> None:
    """Weights scaled by fan-in, positive 1-D blobs (biases, BatchNorm statistics): finite outputs."""
    for layer in net.layers:
        for blob in layer.blobs:
            if blob.num_axes >= 2:
                bound = np.sqrt(3.0 / (blob.count // blob.shape[0]))
                blob.data[...] = rng.uniform(-bound, bound, blob.shape)
            else:
                blob.data[...] = rng.uniform(0.5, 1.5, blob.shape)


def at_batch_one(path: pathlib.Path) -> Net:
    net = Net(path, phase=caffe_pb2.TEST)
    for blob in net.input_blobs:
        blob.reshape(1, *blob.shape[1:])
    net.reshape()
    return net


def live_peak_bytes(net: Net) -> int:
    """The most bytes the planned storages hold live at any one layer: no plan can use less."""
    plan = net._memory_plan
    return max(sum(s.count for s in plan.storages if s.first_layer <= i <= s.last_layer)
               for i in range(len(net.layers))) * 4


@pytest.mark.parametrize("name", sorted([*OURS, *PUBLIC]))
def test_planned_net_computes_the_plain_nets_outputs(name):
    rng = np.random.default_rng(7)
    path = deploy_file(name)
    plain = at_batch_one(path)
    randomise(plain, rng)
    planned = Net(path, phase=caffe_pb2.TEST, optimize_memory=True)
    planned.share_trained_layers_with(plain)
    for plain_input, planned_input in zip(plain.input_blobs, planned.input_blobs, strict=True):
        planned_input.reshape(plain_input.shape)
        plain_input.data[...] = planned_input.data[...] = rng.uniform(-1, 1, plain_input.shape)
    plain.forward()
    for _ in range(2):
        planned.forward()
        for index in plain.output_blob_indices:
            expected = plain.blobs[index].data
            tolerance = 1e-5 * (np.abs(expected).max() + 1e-5)
            np.testing.assert_allclose(planned.blobs[index].data, expected, rtol=0, atol=tolerance)
    plan = planned._memory_plan
    # Greedy packing stays within a quarter of the lower bound, and saves at least half of the blobs' memory.
    assert plan.arena_count * 4 <= 1.25 * live_peak_bytes(planned)
    assert plan.bytes_with <= 0.5 * plan.bytes_without or name == "lenet"


BACKWARD_STATE = {"Pooling": "argmax", "BatchNorm": "x_norm", "Scale": "saved_bottom", "LRN": "scale"}


@pytest.mark.parametrize("name", ["branching", "googlenet", "resnet50"])
@pytest.mark.parametrize("force_backward", [False, True])
def test_layers_keep_backward_state_only_when_the_net_runs_backward(name, force_backward):
    param = read_text_file(deploy_file(name), caffe_pb2.NetParameter())
    param.force_backward = force_backward
    net = Net(param, phase=caffe_pb2.TEST)
    for blob in net.input_blobs:
        blob.reshape(1, *blob.shape[1:])
    net.forward()
    held: dict[str, bool] = {}
    for layer in net.layers:
        if layer.type in BACKWARD_STATE:
            kept = getattr(layer, BACKWARD_STATE[layer.type]) is not None
            held[layer.type] = held.get(layer.type, False) or kept
    expected = {"branching": {"Pooling", "LRN", "BatchNorm", "Scale"}, "googlenet": {"Pooling", "LRN"},
                "resnet50": {"Pooling", "BatchNorm", "Scale"}}[name]
    assert set(held) == expected
    # BatchNorm uses its stored statistics in TEST and so keeps no normalised copy either way.
    assert held == {t: force_backward and t != "BatchNorm" for t in expected}
