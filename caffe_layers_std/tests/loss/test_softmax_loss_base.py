"""SoftmaxLossLayer: a loss on softmax(x) along an axis, with an optional softmax top of loss weight 0."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError


def test_default_loss_weights_two_tops(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1])], [Blob(), Blob()])
    assert (layer.loss(0), layer.loss(1)) == (1.0, 0.0)


def test_one_loss_weight_for_two_tops_refused(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss" loss_weight: 2')
    with pytest.raises(LayerSetupError, match="once per top"):
        layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1])], [Blob(), Blob()])


def test_the_softmax_top_shares_the_probabilities(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    bottom = [blob_of(np.log(np.float32([[1, 3], [2, 2]]))), blob_of([0, 1])]
    top = [Blob(), Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    np.testing.assert_allclose(top[1].cpu_data(), [[0.25, 0.75], [0.5, 0.5]], rtol=1e-6)
    assert layer.backward_ignores_tops == (1,)


def test_the_labels_must_count_the_predictions(make_layer, blob_of):
    layer = make_layer('name: "l" type: "SoftmaxWithLoss"')
    with pytest.raises(LayerSetupError, match=r"number of labels \(6, .*predictions \(2\)"):
        layer.setup([blob_of(np.zeros((2, 3))), blob_of(np.zeros((2, 1, 3)))], [Blob()])
