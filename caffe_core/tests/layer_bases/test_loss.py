"""LossLayer: default loss weights, label checks and the label bottom, normalization and its normalizer."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.device import CPU
from caffe_core.errors import LayerSetupError
from caffe_core.layer_bases.loss import (
    NORM,
    LossLayer,
    check_labels,
    normalization_mode,
    normalizer,
    read_labels,
)
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text


class SumLoss(LossLayer):
    """The sum of the predictions."""

    type = "TestSumLoss"

    def forward_cpu(self, bottom, top):
        top[0].mutable_cpu_data()[...] = bottom[0].cpu_data().sum()


class SumLossWithOutput(SumLoss):
    exact_num_top_blobs = -1
    min_top_blobs = 1
    max_top_blobs = 2

    def reshape(self, bottom, top):
        super().reshape(bottom, top)
        if len(top) > 1:
            top[1].reshape_like(bottom[0])


def loss_layer(text="", cls=SumLoss):
    return cls(parse_text(f'name: "l" type: "TestSumLoss" {text}', caffe_pb2.LayerParameter()))


def loss_param(text: str) -> caffe_pb2.LossParameter:
    return parse_text(text, caffe_pb2.LossParameter())


def bottoms(blob_of):
    return [blob_of(np.ones((2, 3))), blob_of([0, 1])]


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


def test_normalizer_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="unknown loss_param.normalization mode 9"):
        normalizer(9, 4, 6)


def test_default_loss_weight_one_top(blob_of):
    layer, top = loss_layer(), Blob()
    layer.setup(bottoms(blob_of), [top])
    assert layer.loss(0) == 1.0
    assert top.shape == ()
    assert top.cpu_diff() == 1.0
    assert layer.forward(bottoms(blob_of), [top]) == 6.0


def test_default_loss_weights_two_tops(blob_of):
    layer = loss_layer(cls=SumLossWithOutput)
    layer.setup(bottoms(blob_of), [Blob(), Blob()])
    assert (layer.loss(0), layer.loss(1)) == (1.0, 0.0)


def test_given_loss_weight_kept(blob_of):
    layer = loss_layer("loss_weight: 2.5")
    layer.setup(bottoms(blob_of), [Blob()])
    assert layer.loss(0) == 2.5


def test_force_backward_skips_the_label():
    layer = loss_layer()
    assert layer.allow_force_backward(0)
    assert not layer.allow_force_backward(1)


def test_first_dimensions_must_match(blob_of):
    message = r"'l'.*label \(shape \(3,\)\) should have the same first dimension"
    with pytest.raises(LayerSetupError, match=message):
        loss_layer().setup([blob_of(np.zeros((2, 3))), blob_of([0, 1, 2])], [Blob()])


def test_refuse_label_backward_names_the_bottom():
    layer = loss_layer()
    layer.refuse_label_backward([True, False])
    with pytest.raises(LayerSetupError, match=r"cannot back-propagate to its label bottom \(bottom 1\)"):
        layer.refuse_label_backward([True, True])
    with pytest.raises(LayerSetupError, match=r"its weights bottom \(bottom 2\)"):
        layer.refuse_label_backward([True, False, True], 2, "weights")


def test_ignore_label():
    assert loss_layer().ignore_label() is None
    assert loss_layer("loss_param { ignore_label: 255 }").ignore_label() == 255


def test_read_labels_truncates_and_masks_the_ignored(blob_of):
    labels, valid = read_labels(loss_layer(), CPU, blob_of([[2.7, -1], [0, 1]]), 3, -1)
    np.testing.assert_array_equal(labels, [[2, 0], [0, 1]])
    np.testing.assert_array_equal(valid, [[True, False], [True, True]])


@pytest.mark.parametrize(("values", "ignore", "message"), [
    ([0, 3], None, r"outside \[0, 3\) \(the number of classes\)$"),
    ([-1, 1], 5, "outside .* and is not the ignore_label 5"),
])
def test_labels_out_of_range_are_refused(blob_of, values, ignore, message):
    with pytest.raises(LayerSetupError, match=message):
        read_labels(loss_layer(), CPU, blob_of(values), 3, ignore)
    with pytest.raises(LayerSetupError, match=message):
        check_labels(loss_layer(), blob_of(values), 3, ignore)


def test_no_labels_pass_the_check(blob_of):
    check_labels(loss_layer(), Blob((0,)), 3, None)
