"""LRN: golden case, Caffe's ReferenceLRNForward for both regions, gradients (1e-2, 1e-2) and refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def lrn_text(params: str) -> str:
    """An LRN layer named 'lrn' with this lrn_param text."""
    return f"name: 'lrn' type: 'LRN' lrn_param {{ {params} }}"


def reference_lrn(x, size, alpha, beta, k, within):
    """Caffe's ReferenceLRNForward, with k for ACROSS_CHANNELS (1 within a channel)."""
    x = x.astype(np.float64)
    num, channels, height, width = x.shape
    half = (size - 1) // 2
    out = np.empty_like(x)
    for n in range(num):
        for c in range(channels):
            for h in range(height):
                for w in range(width):
                    if within:
                        window = x[n, c, max(h - half, 0): h + half + 1, max(w - half, 0): w + half + 1]
                        scale = 1.0 + alpha / size ** 2 * (window ** 2).sum()
                    else:
                        window = x[n, max(c - half, 0): c + half + 1, h, w]
                        scale = k + alpha / size * (window ** 2).sum()
                    out[n, c, h, w] = x[n, c, h, w] * scale ** -beta
    return out


def test_golden(golden_case):
    assert check_layer_case(golden_case("lrn_across")) == []


@pytest.mark.parametrize(("params", "size", "alpha", "beta", "k", "within"), [
    ("", 5, 1.0, 0.75, 1.0, False),
    ("local_size: 15", 15, 1.0, 0.75, 1.0, False),
    ("local_size: 3 alpha: 0.5 beta: 0.6 k: 2", 3, 0.5, 0.6, 2.0, False),
    ("norm_region: WITHIN_CHANNEL local_size: 3", 3, 1.0, 0.75, 1.0, True),
    ("norm_region: WITHIN_CHANNEL local_size: 3 k: 5 alpha: 2", 3, 2.0, 0.75, 5.0, True),
])
def test_forward_against_reference(make_layer, gaussian, params, size, alpha, beta, k, within):
    bottom, top = gaussian((2, 7, 3, 3)), Blob()
    layer = make_layer(lrn_text(params))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    want = reference_lrn(bottom.cpu_data(), size, alpha, beta, k, within)
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("params", ["", "local_size: 3 k: 2 beta: 0.6",
                                    "norm_region: WITHIN_CHANNEL local_size: 3"])
def test_gradient(make_layer, gaussian, params):
    layer = make_layer(lrn_text(params))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 7, 3, 3))], [Blob()])


def test_refuses_even_local_size(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match=r"layer 'lrn'.*odd values for local_size \(got 4\)"):
        make_layer(lrn_text("local_size: 4")).setup([gaussian((2, 7, 3, 3))], [Blob()])


def test_refuses_non_4d_input(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="must have 4 axes"):
        make_layer(lrn_text("")).setup([gaussian((2, 7, 3))], [Blob()])
