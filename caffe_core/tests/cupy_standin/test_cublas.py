"""The stand-in's cupy.cublas.gemm: cupy's signature and meaning, on device arrays only."""

import importlib

import numpy as np
import pytest

from caffe_core import cupy_standin as cp
from caffe_core.cupy_standin.array import StandinUnsupported

cublas = importlib.import_module("caffe_core.cupy_standin.cublas")


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_it_is_imported_as_cupy_cublas_is():
    assert importlib.import_module(f"{cp.__name__}.cublas") is cublas
    assert cp.cublas is cublas


@pytest.mark.parametrize("transa", ["N", "T", 1])
@pytest.mark.parametrize("transb", ["N", "T", "H"])
def test_gemm_with_beta_one_adds_alpha_op_a_op_b_into_out(transa, transb):
    a, b, c = normal((4, 6), 1), normal((6, 5), 2), normal((4, 5), 3)
    stored_a = a if transa == "N" else a.T.copy()
    stored_b = b if transb == "N" else b.T.copy()
    out = cp.asarray(c)
    result = cublas.gemm(transa, transb, cp.asarray(stored_a), cp.asarray(stored_b), out=out, alpha=0.5,
                         beta=1.0)
    assert result is out
    np.testing.assert_allclose(out.get(), c + 0.5 * (a.astype(np.float64) @ b), rtol=1e-5, atol=1e-5)


def test_without_out_a_new_fortran_ordered_product_is_returned():
    a, b = normal((3, 2), 1), normal((2, 4), 2)
    result = cublas.gemm("N", "N", cp.asarray(a), cp.asarray(b), beta=5.0)
    assert result.strides == (4, 12)
    np.testing.assert_allclose(result.get(), a @ b, rtol=1e-6)


def test_beta_zero_does_not_read_out():
    out = cp.asarray(np.full((2, 2), np.nan, np.float32))
    cublas.gemm("N", "N", cp.asarray(np.eye(2, dtype=np.float32)), cp.asarray(np.ones((2, 2), np.float32)),
                out=out)
    np.testing.assert_array_equal(out.get(), np.ones((2, 2)))


def test_host_arrays_are_refused():
    device = cp.asarray(normal((2, 2), 1))
    for args in [(normal((2, 2), 2), device), (device, normal((2, 2), 2))]:
        with pytest.raises(TypeError, match="device array"):
            cublas.gemm("N", "N", *args)
    with pytest.raises(TypeError, match="device array"):
        cublas.gemm("N", "N", device, device, out=normal((2, 2), 3))


@pytest.mark.parametrize(("a", "b", "out"), [
    ((2, 3), (2, 3), None),
    ((2, 3), (3, 4), (2, 5)),
    ((2, 3, 1), (3, 4), None),
])
def test_cupys_assertions_hold(a, b, out):
    out = None if out is None else cp.zeros(out, dtype=np.float32)
    with pytest.raises(AssertionError):
        cublas.gemm("N", "N", cp.zeros(a, dtype=np.float32), cp.zeros(b, dtype=np.float32), out=out)


def test_bad_trans_and_dtype_are_refused():
    matrix = cp.zeros((2, 2), dtype=np.float32)
    with pytest.raises(TypeError, match="invalid trans"):
        cublas.gemm("X", "N", matrix, matrix)
    integers = cp.zeros((2, 2), dtype=np.int32)
    with pytest.raises(TypeError, match="invalid dtype"):
        cublas.gemm("N", "N", integers, integers)


def test_the_rest_of_cupy_cublas_is_missing():
    with pytest.raises(StandinUnsupported, match="cupy.cublas.gemv"):
        cublas.gemv  # noqa: B018
