"""ShuffleChannel: forward against the fork's copy loop, backward as its inverse, the gradient, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker


def text(group: int | None) -> str:
    """A ShuffleChannel layer (no shuffle_channel_param when group is None)."""
    block = "" if group is None else f"shuffle_channel_param {{ group: {group} }}"
    return f'name: "shuffle" type: "ShuffleChannel" {block}'


def reference(x: np.ndarray, group: int) -> np.ndarray:
    """The fork's Resize_cpu: input channel (i, j) of (group, C / group) goes to channel j * group + i."""
    num, channels = x.shape[:2]
    flat = x.reshape(num, channels, -1)
    out = np.empty_like(flat)
    columns = channels // group
    for i in range(group):
        for j in range(columns):
            out[:, j * group + i] = flat[:, i * columns + j]
    return out


@pytest.mark.parametrize(("group", "shape", "top_shape"), [
    (None, (2, 6, 3, 2), (2, 6, 3, 2)), (2, (2, 6, 3, 2), (2, 6, 3, 2)), (3, (2, 6, 3, 2), (2, 6, 3, 2)),
    (6, (1, 6, 2, 2), (1, 6, 2, 2)), (2, (3, 4), (3, 4, 1, 1)), (2, (2, 4, 5), (2, 4, 5, 1))])
def test_forward(make_layer, gaussian, group, shape, top_shape):
    layer, bottom, top = make_layer(text(group)), gaussian(shape), Blob()
    layer.setup([bottom], [top])
    assert top.shape == top_shape
    layer.forward([bottom], [top])
    expected = reference(bottom.cpu_data(), group or 1)
    np.testing.assert_array_equal(top.cpu_data().reshape(expected.shape), expected)


def test_channel_order(make_layer, blob_of):
    bottom, top = blob_of(np.arange(6.0).reshape(1, 6, 1, 1)), Blob()
    layer = make_layer(text(2))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    np.testing.assert_array_equal(top.cpu_data().reshape(-1), [0, 3, 1, 4, 2, 5])


@pytest.mark.parametrize("group", [2, 3])
def test_backward_inverts_the_shuffle(make_layer, gaussian, group):
    layer, bottom, top = make_layer(text(group)), gaussian((2, 6, 2, 3)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = top.cpu_data()
    layer.backward([top], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff(), bottom.cpu_data())


@pytest.mark.parametrize("group", [1, 2, 3])
def test_gradient(make_layer, gaussian, group):
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(text(group)), [gaussian((2, 6, 1, 2))],
                                                          [Blob()])


@pytest.mark.parametrize(("group", "shape", "message"), [
    (0, (2, 6, 2, 2), "shuffle_channel_param.group must be greater than 0"),
    (4, (2, 6, 2, 2), "6 channels are not divisible by shuffle_channel_param.group 4"),
    (1, (2, 6, 2, 2, 1), "2 to 4 axes"), (1, (6,), "2 to 4 axes")])
def test_refusals(make_layer, gaussian, group, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        make_layer(text(group)).setup([gaussian(shape)], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(text(3), [np.random.default_rng(3).standard_normal((2, 6, 4, 5))])
