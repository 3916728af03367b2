"""gemm_accumulate: c += alpha * a @ b in place, as one SGEMM with beta = 1 through numpy's own OpenBLAS."""

import numpy as np
import pytest

from caffe_core import blas
from caffe_core.blas import gemm_accumulate
from caffe_core.openblas import HostBlas, host_blas


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def transposed(matrix):
    """The same values as a transposed view of a row-major array (what CblasTrans describes)."""
    return np.ascontiguousarray(matrix.swapaxes(-1, -2)).swapaxes(-1, -2)


def expected(a, b, c, alpha=1.0):
    return c.astype(np.float64) + alpha * (a.astype(np.float64) @ b.astype(np.float64))


def numpy_builds_on_openblas():
    name = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    return "openblas" in name.lower()


@pytest.fixture
def sgemm_only(monkeypatch):
    """Fails the test if the blocked numpy fallback runs instead of SGEMM."""
    if not numpy_builds_on_openblas():
        pytest.skip("numpy is not built on OpenBLAS here, so the blocked fallback is the right path")

    def refuse(*args):
        raise AssertionError("the blocked numpy fallback ran instead of SGEMM")

    monkeypatch.setattr(blas, "_blocked_accumulate", refuse)


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
@pytest.mark.parametrize("alpha", [1.0, -0.5])
def test_all_transpose_combinations_accumulate(sgemm_only, transpose_a, transpose_b, alpha):
    a, b, c = normal((7, 13), 1), normal((13, 5), 2), normal((7, 5), 3)
    a = transposed(a) if transpose_a else a
    b = transposed(b) if transpose_b else b
    want = expected(a, b, c, alpha)
    address = c.ctypes.data
    gemm_accumulate(a, b, c, alpha=alpha)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    assert c.ctypes.data == address


def test_a_column_major_target_accumulates_through_the_transposed_product(sgemm_only):
    a, b, c = normal((6, 4), 1), normal((4, 9), 2), transposed(normal((6, 9), 3))
    want = expected(a, b, c)
    gemm_accumulate(a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


def test_views_whose_leading_dimension_exceeds_the_row(sgemm_only):
    big_c = normal((9, 16), 3)
    a, b, c = normal((8, 20), 1)[1:6, 3:17], normal((30, 11), 2)[2:16, 1:10], big_c[2:7, 5:14]
    assert c.strides[0] > c.shape[1] * c.itemsize
    want = expected(a, b, c, 2.0)
    outside = big_c.copy()
    gemm_accumulate(a, b, c, alpha=2.0)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    outside[2:7, 5:14] = big_c[2:7, 5:14]
    np.testing.assert_array_equal(big_c, outside)


def test_transposed_views_of_column_slices(sgemm_only):
    a, b, c = normal((10, 12), 1)[1:6, 2:9].T, normal((12, 15), 2)[2:10, 1:6].T, normal((7, 8), 3)
    want = expected(a, b, c)
    gemm_accumulate(a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_grouped_stacks_multiply_group_by_group(sgemm_only, transpose_b):
    a, b, c = normal((3, 4, 10), 1), normal((3, 10, 6), 2), normal((3, 4, 6), 3)
    b = transposed(b) if transpose_b else b
    want = expected(a, b, c, 0.25)
    gemm_accumulate(a, b, c, alpha=0.25)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)


def test_degenerate_shapes(sgemm_only):
    for m, k, n in [(1, 5, 7), (6, 1, 4), (5, 3, 1), (1, 1, 1)]:
        a, b, c = normal((m, k), 1), normal((k, n), 2), normal((m, n), 3)
        want = expected(a, b, c)
        gemm_accumulate(a, b, c)
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    c = normal((4, 3), 4)
    before = c.copy()
    gemm_accumulate(np.zeros((4, 0), np.float32), np.zeros((0, 3), np.float32), c)
    np.testing.assert_array_equal(c, before)


@pytest.mark.parametrize("case", ["float64", "strided target", "reversed operand", "no sgemm"])
def test_the_blocked_fallback_runs_where_sgemm_cannot_and_gives_the_same_sums(monkeypatch, case):
    a, b, c = normal((9, 5), 1), normal((5, 7), 2), normal((9, 14), 3)
    target = c[:, :7]
    if case == "float64":
        a, b, target = a.astype(np.float64), b.astype(np.float64), target.astype(np.float64)
    elif case == "strided target":
        target = c[:, ::2]
    elif case == "reversed operand":
        a = a[::-1]
    else:
        monkeypatch.setattr(blas, "host_blas", lambda: HostBlas(None, None, "test: no BLAS"))
    calls = []

    def blocked(*args):
        calls.append(args)
        fallback(*args)

    fallback = blas._blocked_accumulate
    monkeypatch.setattr(blas, "_blocked_accumulate", blocked)
    monkeypatch.setattr(blas, "BLOCK_BYTES", 64)
    want = expected(a, b, target, 3.0)
    gemm_accumulate(a, b, target, alpha=3.0)
    np.testing.assert_allclose(target, want, rtol=1e-5, atol=1e-5)
    assert len(calls) == 1


@pytest.mark.parametrize(("shapes", "message"), [
    (((2, 3), (4, 5), (2, 5)), "shapes do not agree"),
    (((2, 3), (3, 5), (2, 4)), "shapes do not agree"),
    (((2, 2, 3), (3, 3, 5), (2, 2, 5)), "shapes do not agree"),
    (((2, 3), (3, 5), (1, 2, 5)), "2-D or 3-D"),
    (((3,), (3,), ()), "2-D or 3-D"),
])
def test_mismatched_shapes_are_refused(shapes, message):
    a, b, c = (np.zeros(shape, np.float32) for shape in shapes)
    with pytest.raises(ValueError, match=message):
        gemm_accumulate(a, b, c)


def test_a_read_only_or_overlapping_target_is_refused():
    a, b = normal((3, 3), 1), normal((3, 3), 2)
    c = normal((3, 3), 3)
    c.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gemm_accumulate(a, b, c)
    with pytest.raises(ValueError, match="overlaps"):
        gemm_accumulate(a, b, a)


def test_host_and_device_arrays_do_not_mix(gpu_standin):
    device = gpu_standin.asarray(normal((3, 3), 1))
    with pytest.raises(TypeError, match="must be too"):
        gemm_accumulate(device, normal((3, 3), 2), normal((3, 3), 3))
    with pytest.raises(TypeError, match="all numpy or all device"):
        gemm_accumulate(normal((3, 3), 2), device, device)


@pytest.mark.parametrize("grouped", [False, True])
def test_device_arrays_accumulate_in_place_through_cublas_gemm(gpu_standin, grouped):
    shape_a, shape_b, shape_c = ((2, 4, 9), (2, 6, 9), (2, 4, 6)) if grouped else ((4, 9), (6, 9), (4, 6))
    a, b_rows, c = normal(shape_a, 1), normal(shape_b, 2), normal(shape_c, 3)
    want = expected(a, b_rows.swapaxes(-1, -2), c, 0.5)
    device_a, device_b, device_c = (gpu_standin.asarray(x) for x in (a, b_rows, c))
    before = gpu_standin.transfers()
    gemm_accumulate(device_a, device_b.swapaxes(-1, -2), device_c, alpha=0.5)
    assert (gpu_standin.transfers() - before).copies == 0
    np.testing.assert_allclose(device_c.get(), want, rtol=1e-5, atol=1e-5)


def test_a_target_overlapping_b_is_refused():
    a, c = normal((3, 3), 1), normal((3, 3), 3)
    with pytest.raises(ValueError, match="overlaps"):
        gemm_accumulate(a, c, c)


def test_the_blocked_fallback_scales_float32_in_float32(monkeypatch):
    # SGEMM takes a float alpha and works in float32: alpha = 2**-24 + 2**-50 becomes 2**-24, and
    # 1 + 2**-24 rounds (ties to even) to 1; carried in float64, the product would round c up to 1 + 2**-23.
    monkeypatch.setattr(blas, "host_blas", lambda: HostBlas(None, None, "test: no BLAS"))
    a, b, c = (np.ones((1, 1), dtype=np.float32) for _ in range(3))
    gemm_accumulate(a, b, c, alpha=2.0 ** -24 + 2.0 ** -50)
    assert c[0, 0] == np.float32(1.0)


def test_long_reductions_into_small_outputs_are_cut_into_small_calls(monkeypatch):
    if not numpy_builds_on_openblas():
        pytest.skip("numpy is not built on OpenBLAS here")
    found = host_blas()
    lengths = []

    def recording(*args):
        lengths.append(args[5])
        found.sgemm(*args)

    monkeypatch.setattr(blas, "host_blas", lambda: HostBlas(recording, found.library, found.detail))
    a, b, c = normal((20, 5000), 1), transposed(normal((5000, 25), 2)), normal((20, 25), 3)
    want = expected(a, b, c)
    gemm_accumulate(a, b, c)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)
    assert sorted(lengths) == [1000, 2000, 2000]
    lengths.clear()
    gemm_accumulate(normal((40, 5000), 4), normal((5000, 30), 5), normal((40, 30), 6))
    assert lengths == [5000]


@pytest.mark.parametrize(("m", "n", "k", "blocks"), [
    (20, 25, 2000, [(0, 2000)]),
    (20, 25, 2001, [(0, 2000), (2000, 1)]),
    (1, 1000, 4500, [(0, 1000), (1000, 1000), (2000, 1000), (3000, 1000), (4000, 500)]),
    (1, 1001, 4500, [(0, 4500)]),
])
def test_reduction_blocks(m, n, k, blocks):
    assert blas.reduction_blocks(m, n, k) == blocks


@pytest.mark.parametrize("count", [2, 3])
def test_small_calls_give_the_numbers_of_one_thread_whatever_the_thread_count(sgemm_only, host_threads,
                                                                              count):
    """The small calls' sums, each in its own slot, are added in call order: the thread count cannot change
    the numbers. Each sum stays within float32's bound for a dot product of its length."""
    a, b = normal((20, 7000), 1), transposed(normal((7000, 25), 2))
    c = normal((20, 25), 3)
    host_threads(1)
    alone = c.copy()
    gemm_accumulate(a, b, alone)
    host_threads(count)
    shared = c.copy()
    gemm_accumulate(a, b, shared)
    np.testing.assert_array_equal(shared, alone)
    # |fl(c + a b) - (c + a b)| <= gamma_(k+1) (|c| + |a| |b|), gamma_n = n u / (1 - n u), u = 2**-24.
    rounding = 7001 * 2.0 ** -24
    bound = rounding / (1 - rounding) * (np.abs(c) + np.abs(a).astype(np.float64) @ np.abs(b))
    assert (np.abs(shared - expected(a, b, c)) <= bound).all()


def test_small_calls_run_on_one_openblas_thread_and_the_count_comes_back(sgemm_only, host_threads,
                                                                          monkeypatch):
    found = host_blas()
    counts = []

    def recording(*args):
        counts.append(found.get_threads())
        found.sgemm(*args)

    host_threads(2)
    monkeypatch.setattr(blas, "host_blas", lambda: HostBlas(recording, found.library, found.detail))
    before = found.get_threads()
    found.set_threads(2)
    try:
        gemm_accumulate(normal((20, 5000), 1), transposed(normal((5000, 25), 2)), normal((20, 25), 3))
        assert found.get_threads() == 2
    finally:
        found.set_threads(before)
    assert len(counts) == 3 and set(counts) == {1}
