"""A small RefineDet-style deploy net (tests/nets/tiny_refinedet_deploy.prototxt: ARM, TCB, ODM and the
5-bottom DetectionOutput wired as RefineDet's generated deploy nets are): the shapes it implies, and two
properties checked by hand with zeroed location heads (every box is its prior) and a silenced ARM source."""

from pathlib import Path

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_layers_ssd.refinedet_detection_output import RefineDetDetectionOutputLayer

DEPLOY = Path(__file__).parent / "nets" / "tiny_refinedet_deploy.prototxt"
PRIORS_PER_CELL, CLASSES, KEEP_TOP_K = 3, 3, 40
SOURCES = {"pool1": 16, "conv2": 8}           # ARM source -> feature-map side
NUM_PRIORS = sum(side * side * PRIORS_PER_CELL for side in SOURCES.values())

pytestmark = pytest.mark.requires_layer_types("Convolution", "ReLU", "Pooling", "Deconvolution", "Eltwise",
                                              "Permute", "Flatten", "PriorBox", "Concat", "Reshape",
                                              "Softmax", "DetectionOutput")


def net_with_seeded_weights() -> Net:
    net = Net(str(DEPLOY), phase=caffe_pb2.TEST)
    rng = np.random.default_rng(1701)
    for layer in net.layers:
        for blob in layer.blobs:
            fan_in = blob.count // blob.shape[0] if blob.num_axes > 1 else 1
            blob.mutable_cpu_data()[...] = rng.normal(0, 1, blob.shape) / np.sqrt(fan_in)
    net.blob_by_name("data").mutable_cpu_data()[...] = rng.normal(0, 1, net.blob_by_name("data").shape)
    return net


def zero_location_heads(net: Net) -> None:
    for name in net.layer_names:
        if name.endswith(("_arm_loc", "_odm_loc")):
            for blob in net.layer_by_name(name).blobs:
                blob.mutable_cpu_data()[...] = 0


def silence_arm_source(net: Net, source: str) -> None:
    """Objectness logits (5, -5) for every prior of the source: object probability e^-10 / (1 + e^-10)."""
    weight, bias = net.layer_by_name(f"{source}_arm_conf").blobs
    weight.mutable_cpu_data()[...] = 0
    bias.mutable_cpu_data()[...] = np.tile([5.0, -5.0], PRIORS_PER_CELL)


def test_builds_the_variant_with_the_shapes_the_net_implies():
    net = net_with_seeded_weights()
    assert isinstance(net.layer_by_name("detection_out"), RefineDetDetectionOutputLayer)
    net.forward()
    assert net.blob_by_name("arm_priorbox").shape == (1, 2, NUM_PRIORS * 4)
    assert net.blob_by_name("arm_loc").shape == net.blob_by_name("odm_loc").shape == (1, NUM_PRIORS * 4)
    assert net.blob_by_name("arm_conf_flatten").shape == (1, NUM_PRIORS * 2)
    assert net.blob_by_name("odm_conf_flatten").shape == (1, NUM_PRIORS * CLASSES)
    out = net.blob_by_name("detection_out")
    assert out.shape[:2] == (1, 1) and out.shape[3] == 7 and 0 < out.shape[2] <= KEEP_TOP_K


def test_without_the_filter_the_best_rows_come_from_the_first_source():
    net = net_with_seeded_weights()
    zero_location_heads(net)
    net.forward()
    rows = net.blob_by_name("detection_out").cpu_data().reshape(-1, 7)
    priors = net.blob_by_name("arm_priorbox").cpu_data()[0, 0].reshape(NUM_PRIORS, 4)
    first_source = SOURCES["pool1"] ** 2 * PRIORS_PER_CELL
    for row in rows:
        assert np.nonzero(np.abs(priors - row[3:]).max(axis=1) < 1e-6)[0].max() < first_source


def test_zero_offsets_give_the_priors_and_a_silenced_source_gives_nothing():
    """With both location heads zero, the cascade refines nothing and every row's box is its prior; with the
    first ARM source's objectness far below objectness_score (the best rows come from it otherwise), every
    row comes from the second source's priors, and each score is that prior's ODM probability of its label."""
    net = net_with_seeded_weights()
    zero_location_heads(net)
    silence_arm_source(net, "pool1")
    net.forward()
    rows = net.blob_by_name("detection_out").cpu_data().reshape(-1, 7)
    priors = net.blob_by_name("arm_priorbox").cpu_data()[0, 0].reshape(NUM_PRIORS, 4)
    odm = net.blob_by_name("odm_conf_flatten").cpu_data().reshape(NUM_PRIORS, CLASSES)
    first_source = SOURCES["pool1"] ** 2 * PRIORS_PER_CELL
    assert 0 < len(rows) <= KEEP_TOP_K
    assert set(rows[:, 1]) <= {1, 2}
    for row in rows:
        match = np.nonzero(np.abs(priors - row[3:]).max(axis=1) < 1e-6)[0]
        assert match.size and match.min() >= first_source
        assert np.isclose(odm[match, int(row[1])], row[2], rtol=1e-6).any()


def test_every_source_silenced_gives_the_placeholder_row():
    net = net_with_seeded_weights()
    for source in SOURCES:
        silence_arm_source(net, source)
    net.forward()
    out = net.blob_by_name("detection_out").cpu_data()
    np.testing.assert_array_equal(out, [[[[0, -1, -1, -1, -1, -1, -1]]]])
