"""LabelSpecificAdd: AM-Softmax's margin on the target score (TRAIN only, only above -bias), the annealed
bias by hand, the bias top, in place, label checks, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker

SCORES = np.array([[0.9, 0.1, -0.2], [0.2, 0.5, 0.3], [-0.6, 0.4, 0.36]], dtype=np.float32)
LABELS = np.array([0, 2, 0], dtype=np.float32)
AM = ('name: "m" type: "LabelSpecificAdd" bottom: "s" bottom: "l" top: "t" '
      'label_specific_add_param { bias: -0.35 }')


def run(make_layer, blob_of, text, phase=caffe_pb2.TRAIN, tops=1, scores=SCORES, labels=LABELS):
    layer = make_layer(text, phase=phase)
    bottom, top = [blob_of(scores), blob_of(labels)], [Blob() for _ in range(tops)]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


def test_subtracts_the_margin_from_target_scores_above_it(make_layer, blob_of):
    # 0.9 (label 0) > 0.35: 0.55; 0.3 (label 2) <= 0.35: kept; -0.6 (label 0): kept. Others untouched.
    _, _, top = run(make_layer, blob_of, AM)
    expected = SCORES.copy()
    expected[0, 0] = np.float32(0.9) + np.float32(-0.35)
    np.testing.assert_array_equal(top[0].cpu_data(), expected)


def test_test_phase_copies_even_with_transform_test(make_layer, blob_of):
    # The fork ands transform_test with phase == TRAIN: TEST never adds the bias.
    text = AM.replace("bias: -0.35", "bias: -0.35 transform_test: true")
    _, _, top = run(make_layer, blob_of, text, phase=caffe_pb2.TEST)
    np.testing.assert_array_equal(top[0].cpu_data(), SCORES)


ANNEAL = ('name: "m" type: "LabelSpecificAdd" bottom: "s" bottom: "l" top: "t" top: "margin" '
          'label_specific_add_param { iteration: 0 bias_base: 0 bias_gamma: -5e-05 bias_power: 1 '
          'bias_min: -0.4 bias_max: 0 }')


def test_annealed_bias_by_hand(make_layer, blob_of):
    # AM-Softmax's face_train_test_wo_fn.prototxt: bias = 0 + (1 - 5e-5 it)^1 - 1 = -5e-5 it, clipped to
    # [-0.4, 0]; the iteration advances once per forward.
    layer, bottom, top = run(make_layer, blob_of, ANNEAL, tops=2)
    assert top[1].cpu_data()[0] == 0 and top[1].shape == (1,)
    for _ in range(3):
        layer.forward(bottom, top)
    # In float, as the fork: (1 + gamma 3) rounds, so the bias is -1.50025e-4 rather than -1.5e-4.
    f = np.float32
    assert top[1].cpu_data()[0] == f(f(1) + f(-5e-05) * f(3)) - f(1)
    assert top[1].cpu_data()[0] == pytest.approx(-1.5e-4, rel=1e-3)
    layer.iteration = 20000
    layer.forward(bottom, top)
    assert top[1].cpu_data()[0] == np.float32(-0.4)
    assert top[0].cpu_data()[0, 0] == np.float32(np.float32(0.9) - np.float32(0.4))


def test_in_place(make_layer, blob_of):
    layer = make_layer(AM.replace('top: "t"', 'top: "s"'))
    scores, labels = blob_of(SCORES), blob_of(LABELS)
    layer.setup([scores, labels], [scores])
    layer.forward([scores, labels], [scores])
    assert scores.cpu_data()[0, 0] == np.float32(0.9) + np.float32(-0.35)
    scores.mutable_cpu_diff()[...] = 2.0
    layer.backward([scores], [True, False], [scores, labels])
    assert (scores.cpu_diff() == 2.0).all()


def test_refuses_a_label_outside_the_scores(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match=r"outside \[0, 3\)"):
        run(make_layer, blob_of, AM, labels=np.array([0, 3, 1], np.float32))


def test_refuses_labels_of_another_count(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="one per sample"):
        run(make_layer, blob_of, AM, labels=np.array([0, 1], np.float32))


def test_gradient(make_layer, blob_of):
    # Targets away from -bias = 0.35 by far more than the step: the margin is a constant there.
    layer = make_layer(AM)
    bottom = [blob_of(SCORES + np.float32(0.01)), blob_of(LABELS)]
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom=0)
