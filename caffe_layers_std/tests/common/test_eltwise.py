"""Eltwise: golden numbers, Caffe's MAX tie rule, PROD gradients, SUM coefficients, config errors."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def layer_text(params: str) -> str:
    return f'name: "elt" type: "Eltwise" eltwise_param {{ {params} }}'


def uniform(seed, shape=(2, 3, 2, 2)):
    """Caffe's Eltwise tests use uniform [0, 1) bottoms."""
    return np.random.default_rng(seed).uniform(0, 1, shape)


def run(layer, arrays, top_diff=None):
    bottom, top = [Blob(np.shape(a)) for a in arrays], Blob()
    for blob, array in zip(bottom, arrays, strict=True):
        blob.mutable_cpu_data()[...] = array
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    if top_diff is not None:
        top.mutable_cpu_diff()[...] = top_diff
        layer.backward([top], [True] * len(bottom), bottom)
    return bottom, top


@pytest.mark.parametrize("case", ["eltwise_max", "eltwise_prod", "eltwise_sum_coeff"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


def test_sum_with_coefficients(make_layer):
    a, b, c = uniform(1), uniform(2), uniform(3)
    bottom, top = run(make_layer(layer_text("operation: SUM coeff: 1 coeff: -0.5 coeff: 2")), [a, b, c],
                      top_diff=np.ones(a.shape))
    np.testing.assert_allclose(top.cpu_data(), a - 0.5 * b + 2 * c, rtol=1e-5, atol=1e-6)
    for blob, coeff in zip(bottom, (1, -0.5, 2), strict=True):
        np.testing.assert_array_equal(blob.cpu_diff(), coeff)


def test_max_ties_follow_caffe(make_layer):
    a = np.array([1.0, 2.0, 5.0, 3.0])
    b = np.array([1.0, 2.0, 4.0, 3.0])
    c = np.array([0.0, 2.0, 5.0, 4.0])
    bottom, top = run(make_layer(layer_text("operation: MAX")), [a, b, c], top_diff=np.ones(4))
    np.testing.assert_array_equal(top.cpu_data(), [1.0, 2.0, 5.0, 4.0])
    # A tie of bottoms 0 and 1 goes to 1; a later equal bottom does not take over.
    np.testing.assert_array_equal(bottom[0].cpu_diff(), [0.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(bottom[1].cpu_diff(), [1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(bottom[2].cpu_diff(), [0.0, 0.0, 0.0, 1.0])


def test_max_gives_the_losing_bottoms_a_positive_zero_diff(make_layer):
    bottom, _ = run(make_layer(layer_text("operation: MAX")), [[1.0, 0.0], [0.0, 1.0]], top_diff=[-2.0, -3.0])
    np.testing.assert_array_equal(bottom[0].cpu_diff(), [-2.0, 0.0])
    np.testing.assert_array_equal(np.signbit(bottom[0].cpu_diff()), [True, False])
    np.testing.assert_array_equal(np.signbit(bottom[1].cpu_diff()), [False, True])


@pytest.mark.parametrize("stable", ["true", "false"])
def test_product_and_its_gradient(make_layer, stable):
    a, b, c = uniform(1) + 0.5, uniform(2) + 0.5, uniform(3) + 0.5
    bottom, top = run(make_layer(layer_text(f"operation: PROD stable_prod_grad: {stable}")), [a, b, c],
                      top_diff=np.ones(a.shape))
    np.testing.assert_allclose(top.cpu_data(), a * b * c, rtol=1e-5)
    for blob, others in zip(bottom, (b * c, a * c, a * b), strict=True):
        np.testing.assert_allclose(blob.cpu_diff(), others, rtol=1e-5)


@pytest.mark.parametrize("stable", [True, False])
def test_a_zero_input_shows_which_product_gradient_runs(make_layer, stable):
    # Caffe: stable multiplies the other bottoms; unstable divides top by the bottom, so 0 / 0 = NaN.
    a, b = np.array([0.0, 2.0], np.float32), np.array([3.0, 5.0], np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        bottom, _ = run(make_layer(layer_text(f"operation: PROD stable_prod_grad: {str(stable).lower()}")),
                        [a, b], top_diff=[1.0, 1.0])
    first = bottom[0].cpu_diff()
    if stable:
        np.testing.assert_array_equal(first, [3.0, 5.0])
    else:
        assert np.isnan(first[0]) and first[1] == 5.0


@pytest.mark.parametrize("params", ["operation: PROD", "operation: PROD stable_prod_grad: false",
                                    "operation: SUM", "operation: SUM coeff: 1 coeff: -0.5 coeff: 2"])
def test_gradient(make_layer, blob_of, params):
    bottom = [blob_of(uniform(seed)) for seed in (1, 2, 3)]
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(layer_text(params)), bottom, [Blob()])


def test_max_gradient(make_layer, blob_of):
    bottom = [blob_of(uniform(seed)) for seed in (1, 2, 3)]
    layer = make_layer(layer_text("operation: MAX"))
    GradientChecker(1e-4, 1e-3).check_gradient_eltwise(layer, bottom, [Blob()])


def test_coefficient_count_must_match_the_bottoms(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'elt'.*one coefficient per bottom blob: got 1 for 2"):
        make_layer(layer_text("coeff: 2")).setup([blob_of(uniform(1)), blob_of(uniform(2))], [Blob()])


@pytest.mark.parametrize("operation", ["PROD", "MAX"])
def test_coefficients_need_sum(make_layer, blob_of, operation):
    message = f"'elt'.*coeff is only allowed with operation SUM, not {operation}"
    with pytest.raises(LayerSetupError, match=message):
        make_layer(layer_text(f"operation: {operation} coeff: 1 coeff: 1")).setup(
            [blob_of(uniform(1)), blob_of(uniform(2))], [Blob()])


def test_bottoms_must_share_a_shape(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'elt'.*same shape: bottom 1"):
        make_layer(layer_text("operation: SUM")).setup([blob_of(uniform(1)), blob_of(np.ones(3))], [Blob()])


@pytest.mark.gpu
@pytest.mark.parametrize("params", ["operation: PROD", "operation: SUM coeff: 1 coeff: -2", "operation: MAX"])
def test_gpu_matches_cpu(gpu_matches_cpu, params):
    gpu_matches_cpu(layer_text(params), [uniform(1), uniform(2)])
