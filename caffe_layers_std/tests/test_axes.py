"""Shared axis helpers: canonical parameter axes, the deprecated *_dim fields, (outer, axis, inner) splits."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_layers_std.axes import axis_or_legacy_dim, canonical_axis, split_at, split_predictions


@pytest.mark.parametrize(("axis", "expected"), [(0, 0), (2, 2), (-1, 2), (-3, 0)])
def test_canonical_axis(make_layer, axis, expected):
    layer = make_layer('name: "s" type: "Softmax"')
    assert canonical_axis(layer, Blob((2, 3, 4)), axis, "softmax_param.axis") == expected


@pytest.mark.parametrize("axis", [3, -4])
def test_canonical_axis_out_of_range_names_layer_and_field(make_layer, axis):
    layer = make_layer('name: "s" type: "Softmax"')
    with pytest.raises(LayerSetupError, match=rf"'s'.*softmax_param.axis: axis {axis} out of range"):
        canonical_axis(layer, Blob((2, 3, 4)), axis, "softmax_param.axis")


@pytest.mark.parametrize(("params", "expected"), [("", 1), ("axis: -1", 2), ("concat_dim: 0", 0),
                                                  ("concat_dim: 2", 2)])
def test_axis_or_legacy_dim(make_layer, params, expected):
    layer = make_layer(f'name: "c" type: "Concat" concat_param {{ {params} }}')
    assert axis_or_legacy_dim(layer, Blob((2, 3, 4)), "concat_param", "concat_dim") == expected


def test_axis_and_legacy_dim_together_are_refused(make_layer):
    layer = make_layer('name: "c" type: "Slice" slice_param { axis: 1 slice_dim: 1 }')
    with pytest.raises(LayerSetupError, match="'c'.*either slice_param.axis or slice_param.slice_dim, not"):
        axis_or_legacy_dim(layer, Blob((2, 3, 4)), "slice_param", "slice_dim")


def test_legacy_dim_out_of_range_is_refused(make_layer):
    layer = make_layer('name: "c" type: "Slice" slice_param { slice_dim: 3 }')
    with pytest.raises(LayerSetupError, match=r"'c'.*slice_param.slice_dim 3 is out of range.*\(2, 3, 4\)"):
        axis_or_legacy_dim(layer, Blob((2, 3, 4)), "slice_param", "slice_dim")


@pytest.mark.parametrize(("axis", "expected"), [(0, (1, 2, 12)), (1, (2, 3, 4)), (2, (6, 4, 1))])
def test_split_at(axis, expected):
    assert split_at(Blob((2, 3, 4)), axis) == expected


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
