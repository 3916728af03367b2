"""The public MobileNet-SSD deploy net (chuanqi305/MobileNet-SSD, read from the folder CAFFE_PUBLIC_MODELS
names) with the SSD pack: Caffe's shapes (1917 priors at 300 x 300), detections from seeded weights with
class-boosting conf biases, and a .caffemodel round trip that keeps the SSD fork's field numbers."""

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import read_binary_file
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing.public_models import public_model
from caffe_core.testing.wire import wire_fields

DEPLOY = "external/mobilenet_ssd_deploy.prototxt"
TYPES = ("Convolution", "ReLU", "Concat", "Flatten", "Reshape", "Softmax", "PriorBox", "Permute",
         "DetectionOutput")
# Feature-map side and priors per cell of each head: 3 for conv11 (min size, ratios 2, 1/2), 6 for the others.
HEADS = {"conv11": (19, 3), "conv13": (10, 6), "conv14_2": (5, 6), "conv15_2": (3, 6), "conv16_2": (2, 6),
         "conv17_2": (1, 6)}
NUM_PRIORS = 1917
CLASSES = 21
BOOSTED = {"conv13": 15, "conv14_2": 7}  # head -> the class its first prior of every cell votes for

pytestmark = pytest.mark.requires_layer_types(*TYPES)


def load() -> Net:
    return Net(public_model(DEPLOY), phase=caffe_pb2.TEST)


def fill_weights(net: Net) -> None:
    """Seeded weights scaled by fan-in; two conf heads favour a class in their first prior; small loc."""
    rng = np.random.default_rng(1701)
    for name, layer in zip(net.layer_names, net.layers, strict=True):
        for blob in layer.blobs:
            fan_in = blob.count // blob.shape[0] if blob.num_axes > 1 else 1
            blob.mutable_cpu_data()[...] = rng.normal(0, 1, blob.shape) / np.sqrt(fan_in)
        head = name.removesuffix("_mbox_conf")
        if name.endswith("_mbox_loc"):
            for blob in layer.blobs:
                blob.mutable_cpu_data()[...] *= 0.05
        elif name.endswith("_mbox_conf"):
            layer.blobs[0].mutable_cpu_data()[...] *= 0.3
            bias = layer.blobs[1].mutable_cpu_data()
            bias[...] = 0
            if head in BOOSTED:
                bias[BOOSTED[head]] = 4.5


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h)


def test_builds_with_the_shapes_the_net_implies():
    net = load()
    total = 0
    for head, (side, per_cell) in HEADS.items():
        priors = side * side * per_cell
        total += priors
        assert net.blob_by_name(head).shape[2:] == (side, side)
        assert net.blob_by_name(f"{head}_mbox_loc").shape == (1, per_cell * 4, side, side)
        assert net.blob_by_name(f"{head}_mbox_loc_perm").shape == (1, side, side, per_cell * 4)
        assert net.blob_by_name(f"{head}_mbox_loc_flat").shape == (1, priors * 4)
        assert net.blob_by_name(f"{head}_mbox_conf_flat").shape == (1, priors * CLASSES)
        assert net.blob_by_name(f"{head}_mbox_priorbox").shape == (1, 2, priors * 4)
    assert total == NUM_PRIORS
    assert net.blob_by_name("mbox_loc").shape == (1, NUM_PRIORS * 4)
    assert net.blob_by_name("mbox_conf").shape == (1, NUM_PRIORS * CLASSES)
    assert net.blob_by_name("mbox_priorbox").shape == (1, 2, NUM_PRIORS * 4)
    assert net.blob_by_name("mbox_conf_softmax").shape == (1, NUM_PRIORS, CLASSES)
    assert net.blob_by_name("mbox_conf_flatten").shape == (1, NUM_PRIORS * CLASSES)
    assert net.blob_by_name("detection_out").shape == (1, 1, 1, 7)


def run(net: Net, image: np.ndarray) -> np.ndarray:
    net.blob_by_name("data").mutable_cpu_data()[...] = image
    net.forward()
    return net.blob_by_name("detection_out").cpu_data().reshape(-1, 7).copy()


def test_produces_valid_detections():
    net = load()
    fill_weights(net)
    rows = run(net, np.random.default_rng(0).normal(0, 1, (1, 3, 300, 300)))
    # conv11's first prior: centre (0.5 * 300 / 19) px, side 60 px.
    centre, half = 0.5 * 300 / 19 / 300, 30 / 300
    priors = net.blob_by_name("mbox_priorbox").cpu_data()[0, 0].reshape(-1, 4)
    np.testing.assert_allclose(priors[0], [centre - half] * 2 + [centre + half] * 2, rtol=1e-5)
    assert 0 < len(rows) <= 100
    assert set(rows[:, 0]) == {0}
    assert set(rows[:, 1].astype(int)) == set(BOOSTED.values())
    assert (rows[:, 2] > 0.25).all() and (rows[:, 2] <= 1).all()
    boxes = rows[:, 3:]
    assert (boxes[:, 2] > boxes[:, 0]).all() and (boxes[:, 3] > boxes[:, 1]).all()
    assert (boxes > -0.5).all() and (boxes < 1.5).all()
    labels = rows[:, 1]
    assert (np.diff(labels) >= 0).all()
    for label in set(labels):
        mine = boxes[labels == label]
        scores = rows[labels == label, 2]
        assert (np.diff(scores) <= 0).all()
        for i in range(len(mine)):
            for j in range(i):
                assert overlap(mine[i], mine[j]) <= 0.45 + 1e-6


def test_caffemodel_keeps_the_ssd_numbers_and_reloads(tmp_path):
    net = load()
    fill_weights(net)
    image = np.random.default_rng(0).normal(0, 1, (1, 3, 300, 300))
    before = run(net, image)
    path = tmp_path / "mobilenet_ssd.caffemodel"
    net.save(path)
    numbers_by_type: dict[str, set[int]] = {}
    for payload in wire_fields(path.read_bytes())[100]:  # NetParameter.layer
        layer = wire_fields(payload)
        kind = layer[2][0].decode()  # LayerParameter.type
        numbers_by_type.setdefault(kind, set()).update(layer)
    assert 203 in numbers_by_type["PriorBox"]
    assert 202 in numbers_by_type["Permute"]
    assert 204 in numbers_by_type["DetectionOutput"]
    assert not {200, 201, 202, 203, 204, 205, 206, 207} & numbers_by_type["Convolution"]
    reloaded = load()
    reloaded.copy_trained_layers_from(path)
    np.testing.assert_array_equal(run(reloaded, image), before)
    stored = read_binary_file(path, caffe_pb2.NetParameter())
    prior_layer = next(layer for layer in stored.layer if layer.type == "PriorBox")
    assert list(get_param_block(prior_layer, "prior_box_param").min_size) == [60]
