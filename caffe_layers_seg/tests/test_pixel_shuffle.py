"""PixelShuffle: the golden case, torch's layout against a loop reference, inisis' channel rule, the
gradient, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def ps_text(params: str = "upscale_factor: 2") -> str:
    """A PixelShuffle layer with this pixelshuffle_param text."""
    return f"name: 'ps' type: 'PixelShuffle' bottom: 'x' top: 'y' pixelshuffle_param {{ {params} }}"


def run(run_layer, bottom, params="upscale_factor: 2"):
    """The layer and its top after setup and forward."""
    return run_layer(ps_text(params), [bottom])


def reference(x, r):
    """y[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w]."""
    num, channels, height, width = x.shape
    out = channels // (r * r)
    y = np.zeros((num, out, height * r, width * r), x.dtype)
    for c in range(out):
        for i in range(r):
            for j in range(r):
                y[:, c, i::r, j::r] = x[:, c * r * r + i * r + j]
    return y


def test_golden(golden_case):
    assert check_layer_case(golden_case("pixelshuffle_x2")) == []


@pytest.mark.parametrize(("shape", "r"), [((2, 8, 3, 4), 2), ((1, 9, 2, 2), 3), ((1, 3, 2, 3), 1)])
def test_forward_against_reference(run_layer, gaussian, shape, r):
    bottom = gaussian(shape)
    _, top = run(run_layer, bottom, f"upscale_factor: {r}")
    np.testing.assert_array_equal(top.cpu_data(), reference(bottom.cpu_data(), r))


def test_channels_need_only_be_a_multiple_of_the_factor(run_layer, gaussian):
    """inisis checks C % r: 6 channels with r 2 give one output channel; channels 4 and 5 are unused."""
    bottom = gaussian((2, 6, 2, 2))
    layer, top = run(run_layer, bottom)
    assert top.shape == (2, 1, 4, 4)
    np.testing.assert_array_equal(top.cpu_data(), reference(bottom.cpu_data()[:, :4], 2))
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    assert bottom.cpu_diff()[:, :4].min() == 1 and not bottom.cpu_diff()[:, 4:].any()


def test_gradient(make_layer, gaussian):
    layer = make_layer(ps_text())
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((2, 8, 2, 3))], [Blob()])


@pytest.mark.parametrize(("params", "shape", "message"), [
    ("", (1, 4, 2, 2), "upscale_factor is required"),
    ("upscale_factor: 0", (1, 4, 2, 2), "must be positive"),
    ("upscale_factor: 2", (1, 5, 2, 2), "5 channels are not a multiple of pixelshuffle_param.upscale"),
    ("upscale_factor: 2", (4, 2, 2), "4 axes"),
])
def test_refusals(run_layer, gaussian, params, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian(shape), params)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian):
    gpu_matches_cpu(ps_text(), [gaussian((2, 8, 3, 4)).cpu_data()])
