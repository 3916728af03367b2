"""InnerProduct: golden numbers, shapes, transpose, gradient, accumulation, stored blobs, config errors."""

import tracemalloc

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.exactness import device_tolerance
from caffe_core.testing.golden import check_layer_case


def layer_text(num_output: int = 4, extra: str = "") -> str:
    return (f'name: "ip" type: "InnerProduct" inner_product_param {{ num_output: {num_output} {extra} '
            f'weight_filler {{ type: "gaussian" }} bias_filler {{ type: "gaussian" }} }}')


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def test_golden(golden_case):
    assert check_layer_case(golden_case("innerproduct")) == []


@pytest.mark.parametrize(("extra", "weight_shape"), [("", (10, 60)), ("transpose: true", (60, 10))])
def test_setup_shapes(make_layer, blob_of, extra, weight_shape):
    layer, top = make_layer(layer_text(10, extra)), Blob()
    layer.setup([blob_of(np.zeros((2, 3, 4, 5)))], [top])
    assert top.shape == (2, 10)
    assert layer.blobs[0].shape == weight_shape
    assert layer.blobs[1].shape == (10,)


def test_axis_keeps_the_leading_axes(make_layer, blob_of):
    layer, top = make_layer(layer_text(7, "axis: 2")), Blob()
    layer.setup([blob_of(np.zeros((2, 3, 4, 5)))], [top])
    assert top.shape == (2, 3, 7)
    assert layer.blobs[0].shape == (7, 20)


def test_forward_is_x_w_transposed_plus_b(make_layer, blob_of):
    x = gaussian((2, 3, 4))
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(5))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    w, b = layer.blobs[0].cpu_data(), layer.blobs[1].cpu_data()
    np.testing.assert_allclose(top.cpu_data(), x.reshape(2, 12) @ w.T + b, rtol=1e-5, atol=1e-5)


def test_transpose_gives_the_same_results(make_layer, blob_of):
    x, dy = gaussian((2, 6)), gaussian((2, 3), 2).astype(np.float32)
    plain, flipped = make_layer(layer_text(3)), make_layer(layer_text(3, "transpose: true"))
    outputs = []
    for layer in (plain, flipped):
        bottom, top = [blob_of(x)], Blob()
        layer.setup(bottom, [top])
        if layer is flipped:
            layer.blobs[0].mutable_cpu_data()[...] = plain.blobs[0].cpu_data().T
            layer.blobs[1].mutable_cpu_data()[...] = plain.blobs[1].cpu_data()
        layer.forward(bottom, [top])
        top.mutable_cpu_diff()[...] = dy
        layer.backward([top], [True], bottom)
        outputs.append((top.cpu_data().copy(), bottom[0].cpu_diff().copy(), layer.blobs[0].cpu_diff().copy()))
    for got, want in zip(outputs[1], (outputs[0][0], outputs[0][1], outputs[0][2].T), strict=True):
        # BLAS kernels (cuBLAS, and OpenBLAS's per CPU) may sum in another order for each transpose: within
        # a few ulps of the largest value
        ulps = max(device_tolerance(), 8 * float(np.finfo(np.float32).eps))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=ulps * np.abs(want).max())


@pytest.mark.parametrize("extra", ["", "transpose: true", "bias_term: false", "axis: 2"])
def test_gradient(make_layer, blob_of, extra):
    bottom = [blob_of(gaussian((2, 3, 2, 2)))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(layer_text(3, extra)), bottom, [Blob()])


def test_param_diffs_accumulate(make_layer, blob_of):
    bottom, top = [blob_of(gaussian((2, 4)))], Blob()
    layer = make_layer(layer_text(3))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    once = [b.cpu_diff().copy() for b in layer.blobs]
    layer.backward([top], [True], bottom)
    for blob, first in zip(layer.blobs, once, strict=True):
        np.testing.assert_allclose(blob.cpu_diff(), 2 * first, rtol=1e-6)
    np.testing.assert_array_equal(once[1], [2.0, 2.0, 2.0])


def test_bias_diff_is_left_alone_without_its_param_propagate_down(make_layer, blob_of):
    """Caffe computes the bias gradient only when bias_term and param_propagate_down(1) both hold."""
    bottom, top = [blob_of(gaussian((2, 4)))], Blob()
    layer = make_layer(layer_text(3))
    layer.setup(bottom, [top])
    layer.set_param_propagate_down(1, False)
    layer.forward(bottom, [top])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(layer.blobs[1].cpu_diff(), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(layer.blobs[0].cpu_diff(), np.tile(bottom[0].cpu_data().sum(axis=0), (3, 1)),
                               rtol=1e-6)


@pytest.mark.cpu_mode
@pytest.mark.parametrize("extra", ["", "transpose: true"])
def test_backward_allocates_no_weight_sized_temporary(make_layer, blob_of, extra):
    bottom, top = [blob_of(gaussian((10, 4096)))], Blob()
    layer = make_layer(f'name: "ip" type: "InnerProduct" inner_product_param {{ num_output: 2048 {extra} }}')
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    top.mutable_cpu_diff()[...] = gaussian((10, 2048), seed=2)
    layer.backward([top], [True], bottom)
    tracemalloc.start()
    try:
        layer.backward([top], [True], bottom)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < layer.blobs[0].cpu_diff().nbytes // 100


def test_changed_input_size_is_refused(make_layer, blob_of):
    layer = make_layer(layer_text(3))
    layer.setup([blob_of(np.zeros((2, 4)))], [Blob()])
    with pytest.raises(LayerSetupError, match="'ip'.*input size incompatible"):
        layer.reshape([blob_of(np.zeros((2, 5)))], [Blob()])


def test_num_output_is_required(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'ip'.*num_output is required"):
        make_layer('name: "ip" type: "InnerProduct"').setup([blob_of(np.zeros((2, 4)))], [Blob()])


STORED = ['blobs { shape { dim: 1 dim: 2 } data: 2 data: 3 }', 'blobs { shape { dim: 1 } data: 10 }']


def stored_text(bias_term: bool, num_stored: int) -> str:
    param = f'inner_product_param {{ num_output: 1 bias_term: {str(bias_term).lower()} }}'
    return ' '.join(['name: "ip" type: "InnerProduct"', param, *STORED[:num_stored]])


def test_stored_blobs_are_kept(make_layer, blob_of):
    layer, bottom, top = make_layer(stored_text(True, 2)), blob_of([[1, 1]]), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    np.testing.assert_array_equal(top.cpu_data(), [[15]])


@pytest.mark.parametrize(("bias_term", "num_stored", "expected"), [(True, 1, 2), (False, 2, 1)])
def test_stored_blob_count_must_match_bias_term(make_layer, blob_of, bias_term, num_stored, expected):
    with pytest.raises(LayerSetupError, match=f"'ip'.*expects {expected} learnable blob.*got {num_stored}"):
        make_layer(stored_text(bias_term, num_stored)).setup([blob_of([[1, 1]])], [Blob()])


def test_axis_out_of_range_names_the_field(make_layer, blob_of):
    """Caffe's CanonicalAxisIndex check, reported under the parameter that set the axis."""
    with pytest.raises(LayerSetupError, match="'ip'.*inner_product_param.axis: axis 2 out of range"):
        make_layer(layer_text(3, "axis: 2")).setup([blob_of(np.zeros((2, 4)))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(3, "transpose: true"), [gaussian((2, 3, 4))], rtol=1e-4, atol=1e-5)
