"""MVN: golden numbers, normalisation groups, Caffe's 4-D top, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

CONFIGS = {
    "per channel": 'name: "mvn" type: "MVN"',
    "across channels": 'name: "mvn" type: "MVN" mvn_param { across_channels: true }',
    "mean only": 'name: "mvn" type: "MVN" mvn_param { normalize_variance: false }',
}


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def test_golden(golden_case):
    assert check_layer_case(golden_case("mvn")) == []


@pytest.mark.parametrize(("config", "axes"), [("per channel", (2, 3)), ("across channels", (1, 2, 3)),
                                              ("mean only", (2, 3))])
def test_forward_normalises_each_group(make_layer, blob_of, config, axes):
    x = 2 * gaussian((2, 3, 4, 5)) + 3
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(CONFIGS[config])
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    x32 = x.astype(np.float32).astype(np.float64)
    centred = x32 - x32.mean(axis=axes, keepdims=True)
    expected = centred if config == "mean only" else centred / (centred.std(axis=axes, keepdims=True) + 1e-9)
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-4, atol=1e-5)


def test_top_is_four_dimensional_as_in_caffe(make_layer, blob_of):
    top = Blob()
    make_layer(CONFIGS["per channel"]).setup([blob_of(gaussian((2, 3)))], [top])
    assert top.shape == (2, 3, 1, 1)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_gradient(make_layer, blob_of, config):
    bottom = [blob_of(gaussian((2, 2, 2, 3)))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(CONFIGS[config]), bottom, [Blob()])


def test_more_than_four_axes_are_refused(make_layer, blob_of):
    """Caffe's MVN reads num/channels/height/width, whose accessors refuse blobs of more than 4 axes."""
    with pytest.raises(LayerSetupError, match=r"'mvn'.*bottom 0 must have at most 4 axes.*\[1, 2, 1, 1, 3\]"):
        make_layer('name: "mvn" type: "MVN"').setup([blob_of(np.zeros((1, 2, 1, 1, 3)))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(CONFIGS["across channels"], [gaussian((2, 3, 4, 5))], rtol=1e-4, atol=1e-5)
