"""gemm_accumulate: c += a @ b in place, on any operand layout."""

import numpy as np
import pytest

from caffe_layers_std.gemm import gemm_accumulate


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_accumulates_in_place(transpose_a, transpose_b):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 5)).astype(np.float32)
    b = rng.normal(size=(5, 4)).astype(np.float32)
    a = np.ascontiguousarray(a.T).T if transpose_a else a
    b = np.ascontiguousarray(b.T).T if transpose_b else b
    c = rng.normal(size=(3, 4)).astype(np.float32)
    expected = c + a @ b
    memory = c.__array_interface__["data"][0]
    gemm_accumulate(a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-6)
    assert c.__array_interface__["data"][0] == memory


def test_non_contiguous_target_falls_back():
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 2), np.float32)
    c = np.zeros((2, 4), np.float32)[:, ::2]
    gemm_accumulate(a, b, c)
    np.testing.assert_array_equal(c, np.full((2, 2), 3.0))
