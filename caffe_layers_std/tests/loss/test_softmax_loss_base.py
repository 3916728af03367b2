"""LossLayer base: default loss weights, label-bottom refusal, shape checks, normalization, label helpers."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.device import CPU
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_layers_std.loss.base import NORM, normalization_mode, normalizer, read_labels, split_predictions


def loss_param(text: str) -> caffe_pb2.LossParameter:
    return parse_text(text, caffe_pb2.LossParameter())


@pytest.mark.parametrize(("text", "default", "expected"), [
    ("", NORM.VALID, NORM.VALID),
    ("", NORM.BATCH_SIZE, NORM.BATCH_SIZE),
    ("normalize: true", NORM.BATCH_SIZE, NORM.VALID),
    ("normalize: false", NORM.VALID, NORM.BATCH_SIZE),
    ("normalization: FULL normalize: false", NORM.VALID, NORM.FULL),
    ("normalization: NONE", NORM.VALID, NORM.NONE),
])
def test_normalization_mode(text, default, expected):
    assert normalization_mode(loss_param(text), default) == expected


@pytest.mark.parametrize(("mode", "valid", "expected"), [
    (NORM.FULL, 5, 24.0), (NORM.VALID, 5, 5.0), (NORM.VALID, -1, 24.0), (NORM.VALID, 0, 1.0),
    (NORM.BATCH_SIZE, 5, 4.0), (NORM.NONE, 5, 1.0),
])
def test_normalizer(mode, valid, expected):
    assert normalizer(mode, 4, 6, valid) == expected


def test_default_loss_weight_one_top(make_layer, blob_of):
    layer = make_layer('name: "l" type: "EuclideanLoss"')
    top = Blob()
    layer.setup([blob_of(np.ones((2, 3))), blob_of(np.zeros((2, 3)))], [top])
    assert layer.loss(0) == 1.0
    assert top.shape == ()
    assert top.cpu_diff() == 1.0


def test_default_loss_weights_two_tops(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1])], [Blob(), Blob()])
    assert (layer.loss(0), layer.loss(1)) == (1.0, 0.0)


def test_one_loss_weight_for_two_tops_refused(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss" loss_weight: 2')
    with pytest.raises(LayerSetupError, match="once per top"):
        layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1])], [Blob(), Blob()])


def test_given_loss_weight_kept(make_layer, blob_of):
    layer = make_layer('name: "l" type: "EuclideanLoss" loss_weight: 2.5')
    layer.setup([blob_of(np.ones((2, 3))), blob_of(np.zeros((2, 3)))], [Blob()])
    assert layer.loss(0) == 2.5


def test_force_backward_skips_the_label(make_layer):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    assert layer.allow_force_backward(0)
    assert not layer.allow_force_backward(1)


def test_first_dimensions_must_match(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    with pytest.raises(LayerSetupError, match="same first dimension"):
        layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1, 2])], [Blob()])


@pytest.mark.parametrize(("axis", "label_shape", "expected"), [(1, (2, 4), (2, 3, 4)),
                                                               (-1, (2, 3), (6, 4, 1))])
def test_split_predictions(make_layer, blob_of, axis, label_shape, expected):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    data, labels = blob_of(np.zeros((2, 3, 4))), blob_of(np.zeros(label_shape))
    assert split_predictions(layer, data, labels, axis, "softmax_param.axis") == expected


def test_split_predictions_needs_one_label_per_prediction(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    message = r"'l'.*number of labels \(6, .*predictions \(8\).*softmax_param.axis 1"
    with pytest.raises(LayerSetupError, match=message):
        split_predictions(layer, blob_of(np.zeros((2, 3, 4))), blob_of(np.zeros((2, 3))), 1,
                          "softmax_param.axis")


def test_read_labels_truncates_and_masks_the_ignored(make_layer, blob_of):
    labels, valid = read_labels(make_layer('name: "l" type: "SoftmaxWithLoss"'), CPU,
                                blob_of([[2.7, -1], [0, 1]]), 3, -1)
    np.testing.assert_array_equal(labels, [[2, 0], [0, 1]])
    np.testing.assert_array_equal(valid, [[True, False], [True, True]])


@pytest.mark.parametrize(("values", "ignore", "message"), [
    ([0, 3], None, r"outside \[0, 3\) \(the number of classes\)$"),
    ([-1, 1], 5, "outside .* and is not the ignore_label 5"),
])
def test_read_labels_refuses_labels_out_of_range(make_layer, blob_of, values, ignore, message):
    with pytest.raises(LayerSetupError, match=message):
        read_labels(make_layer('name: "l" type: "SoftmaxWithLoss"'), CPU, blob_of(values), 3, ignore)
