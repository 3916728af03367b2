"""CenterLoss (caffe-face): its block, the loss and bottom diff against the fork's loops and a hand example,
the centers' diff (the fork's update, -sum_{y_i=j}(x_i - c_j) / (1 + count_j), added to the diff whatever
the loss weight), a gradient check of the bottom, refusals and GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, param_blocks
from caffe_core.testing import GradientChecker
from caffe_core.testing.wire import wire_field_numbers

TEXT = ('name: "center_loss" type: "CenterLoss" bottom: "x" bottom: "label" top: "loss" '
        'center_loss_param { num_output: 4 center_filler { type: "gaussian" std: 0.3 } }')


def data(m=6, k=5, seed=2):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(m, k)).astype(np.float32), np.array([0, 2, 2, 1, 0, 2][:m], np.float32)


def setup(make_layer, blob_of, text=TEXT, x=None, labels=None):
    if x is None:
        x, labels = data()
    layer = make_layer(text)
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    return layer, bottom, top


def test_block_number_fields_and_defaults():
    assert param_blocks()["center_loss_param"].number == 2147
    param = parse_text(TEXT, caffe_pb2.LayerParameter())
    block = get_param_block(param, "center_loss_param")
    assert (block.num_output, block.center_filler.type, block.axis) == (4, "gaussian", 1)
    assert 2147 in wire_field_numbers(param.SerializeToString())
    assert get_param_block(caffe_pb2.LayerParameter(), "center_loss_param").axis == 1


def test_hand_example(make_layer, blob_of):
    # Two classes in 2-D, centers c_0 = (0, 0), c_1 = (1, 1); samples (1, 0) and (3, 0) of class 0, (1, 2) of
    # class 1. Distances (1, 0), (3, 0), (0, 1): loss = (1 + 9 + 1) / 3 / 2 = 11/6.
    x = np.array([[1, 0], [3, 0], [1, 2]], np.float32)
    labels = np.array([0, 0, 1], np.float32)
    layer, bottom, top = setup(make_layer, blob_of, TEXT.replace("num_output: 4", "num_output: 2"), x, labels)
    layer.blobs[0].mutable_cpu_data()[...] = [[0, 0], [1, 1]]
    loss = layer.forward(bottom, top)
    assert loss == pytest.approx(11 / 6)
    # loss weight 3: dx = 3 * distance / 3 = distance. Centers: class 0 has 2 samples, -(1+3, 0)/(2+1);
    # class 1: -(0, 1)/(1+1); the diff held 0.5 before, and the fork adds to it; no loss weight in it.
    top[0].mutable_cpu_diff()[...] = 3
    layer.blobs[0].mutable_cpu_diff()[...] = 0.5
    layer.backward(top, [True, False], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(), [[1, 0], [3, 0], [0, 1]], rtol=1e-6)
    np.testing.assert_allclose(layer.blobs[0].cpu_diff(), [[0.5 - 4 / 3, 0.5], [0.5, 0]], rtol=1e-6)


def test_a_class_without_samples_gets_no_update(make_layer, blob_of):
    layer, bottom, top = setup(make_layer, blob_of)
    layer.forward(bottom, top)
    layer.backward(top, [True, False], bottom)
    assert not layer.blobs[0].cpu_diff()[3].any()  # class 3 has no sample in the batch


def test_matches_the_fork(make_layer, blob_of, fork_face):
    layer, bottom, top = setup(make_layer, blob_of)
    centers = layer.blobs[0].cpu_data().copy()
    loss = layer.forward(bottom, top)
    top[0].mutable_cpu_diff()[...] = 0.7
    layer.backward(top, [True, False], bottom)
    x, labels = data()
    want_loss, dx, center_diff = fork_face.center_loss(x, labels, centers, 0.7)
    assert loss == pytest.approx(float(want_loss), rel=1e-6)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(layer.blobs[0].cpu_diff(), center_diff, rtol=1e-6, atol=1e-7)


def test_no_centers_diff_without_param_propagate_down(make_layer, blob_of):
    layer, bottom, top = setup(make_layer, blob_of)
    layer.set_param_propagate_down(0, False)
    layer.forward(bottom, top)
    layer.backward(top, [True, False], bottom)
    assert not layer.blobs[0].cpu_diff().any()


def test_gradient(make_layer, blob_of):
    # The bottom only: the centers' diff is the fork's update rule, not a gradient (checked by hand above).
    layer, bottom, top = setup(make_layer, blob_of)
    checker = GradientChecker(1e-2, 1e-2, 1701, check_params=False)
    checker.check_gradient_single(layer, bottom, top, 0, 0, 0)


def test_axis_and_four_axis_label(make_layer, blob_of):
    x, labels = data()
    layer, _, top = setup(make_layer, blob_of, x=x.reshape(6, 5, 1, 1), labels=labels.reshape(6, 1, 1, 1))
    assert layer.blobs[0].shape == (4, 5)
    assert top[0].shape == ()


@pytest.mark.parametrize(("text", "shapes", "message"), [
    (TEXT.replace("num_output: 4 ", ""), [(6, 5), (6,)], "num_output must be given"),
    (TEXT, [(6, 5), (6, 2)], "one value per sample"),
    (TEXT, [(6, 5), (5,)], "same first dimension"),
])
def test_refusals(make_layer, blob_of, text, shapes, message):
    with pytest.raises(LayerSetupError, match=message):
        make_layer(text).setup([blob_of(np.zeros(s, np.float32)) for s in shapes], [Blob()])


def test_refuses_labels_outside_the_classes_and_label_backward(make_layer, blob_of):
    layer, bottom, top = setup(make_layer, blob_of)
    bottom[1].mutable_cpu_data()[2] = 4
    with pytest.raises(LayerSetupError, match=r"outside \[0, 4\)"):
        layer.forward(bottom, top)
    bottom[1].mutable_cpu_data()[2] = 1
    layer.forward(bottom, top)
    with pytest.raises(LayerSetupError, match="label bottom"):
        layer.backward(top, [True, True], bottom)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(TEXT, list(data()), propagate_down=[True, False])


def test_an_sgd_step_moves_the_centers_by_the_forks_rule(tmp_path, monkeypatch, fork_face):
    # The solver applies the centers' diff with lr_mult (here base_lr 0.5 x lr_mult 2), whatever the loss
    # weight: c <- c - 1.0 * delta_c.
    from caffe_core.solvers import create_solver

    monkeypatch.chdir(tmp_path)
    x, labels = data()
    (tmp_path / "net.prototxt").write_text(
        'layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 6 dim: 5 } } }\n'
        'layer { name: "label" type: "Input" top: "label" input_param { shape { dim: 6 } } }\n'
        'layer { name: "center_loss" type: "CenterLoss" bottom: "x" bottom: "label" top: "loss" '
        'param { lr_mult: 2 decay_mult: 0 } loss_weight: 0.01 '
        'center_loss_param { num_output: 4 center_filler { type: "gaussian" std: 0.3 } } }\n')
    (tmp_path / "solver.prototxt").write_text('net: "net.prototxt"\nbase_lr: 0.5\nlr_policy: "fixed"\n'
                                              'max_iter: 1\nweight_decay: 0.1\nsolver_mode: CPU\n')
    solver = create_solver("solver.prototxt")
    solver.net.blob_by_name("x").mutable_cpu_data()[...] = x
    solver.net.blob_by_name("label").mutable_cpu_data()[...] = labels
    centers = solver.net.layer_by_name("center_loss").blobs[0]
    before = centers.cpu_data().copy()
    solver.step(1)
    _, _, delta = fork_face.center_loss(x, labels, before, 0.01)
    np.testing.assert_allclose(centers.cpu_data(), before - 1.0 * delta, rtol=1e-6, atol=1e-7)
