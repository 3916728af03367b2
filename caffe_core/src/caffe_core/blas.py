"""c += alpha * a @ b in place as one GEMM with beta = 1, as Caffe's caffe_cpu_gemm accumulates param diffs.

On the host: one SGEMM call per matrix into the OpenBLAS that numpy itself loaded, so no temporary the size
of c and a single pass over it (a long sum into a small c: small calls on the host threads, their sums added
to c in order). Transposed or sliced views go to BLAS as CblasTrans and leading dimensions, never as copies.
Only numpy's own BLAS is called: a second BLAS library (scipy bundles another OpenBLAS) keeps its threads
spinning after each call, which halves the speed of the next numpy product on a small machine. On the
device: one cupy.cublas.gemm call with beta = 1 per matrix.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import numpy as np

from caffe_core.array_types import Array
from caffe_core.device import cupy_module
from caffe_core.host_threads import split_over
from caffe_core.openblas import host_blas, one_blas_thread

# CBLAS's enum values (cblas.h): CblasRowMajor, CblasNoTrans, CblasTrans.
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BLOCK_BYTES = 8 * 2 ** 20
# A long reduction into an output of at most SMALL_OUTPUT values runs faster cut into calls of a million
# multiply-adds shared out to the host threads, each call on one OpenBLAS thread, than as one call: LeNet
# conv1's weight gradient, 20 x 25 values summed over 36,864 points, 1.5 -> 0.73 ms with AVX-512 kernels
# (OpenBLAS's small-matrix kernel takes calls of up to a million) and 1.0 -> 0.74 ms with AVX2 ones.
SMALL_CALL_MULTIPLY_ADDS = 1_000_000
SMALL_OUTPUT = 1000


def gemm_accumulate(a: Array, b: Array, c: Array, alpha: float = 1.0) -> None:
    """c += alpha * a @ b in place: matrices, or stacks (G, M, K) x (G, K, N) with one GEMM per group."""
    alpha = float(alpha)
    if isinstance(c, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            raise TypeError(f"gemm_accumulate: c is a numpy array, so a and b must be too; got "
                            f"{type(a).__name__} and {type(b).__name__}")
        _check_shapes(a, b, c)
        if not c.flags.writeable:
            raise ValueError("gemm_accumulate: c is read-only")
        if np.may_share_memory(c, a) or np.may_share_memory(c, b):
            raise ValueError("gemm_accumulate: c overlaps a or b; the product must not read memory it writes")
        for matrices in _matrices(a, b, c):
            _host_accumulate(*matrices, alpha)
        return
    cupy = cupy_module()
    if not all(isinstance(x, cupy.ndarray) for x in (a, b, c)):
        raise TypeError(f"gemm_accumulate needs a, b and c all numpy or all device arrays; got "
                        f"{type(a).__name__}, {type(b).__name__} and {type(c).__name__}")
    _check_shapes(a, b, c)
    cublas = importlib.import_module(f"{cupy.__name__}.cublas")
    for a2, b2, c2 in _matrices(a, b, c):
        cublas.gemm("N", "N", a2, b2, out=c2, alpha=alpha, beta=1.0)


def _check_shapes(a: Array, b: Array, c: Array) -> None:
    if not (a.ndim == b.ndim == c.ndim and c.ndim in (2, 3)):
        raise ValueError(f"gemm_accumulate needs three matrices or three stacks of them (2-D or 3-D); got "
                         f"a {a.shape}, b {b.shape}, c {c.shape}")
    if (a.shape[:-2] != b.shape[:-2] or c.shape[:-2] != a.shape[:-2] or a.shape[-1] != b.shape[-2]
            or c.shape[-2:] != (a.shape[-2], b.shape[-1])):
        raise ValueError(f"gemm_accumulate: shapes do not agree for c += a @ b: a {a.shape}, b {b.shape}, "
                         f"c {c.shape}")


def _matrices(a: Array, b: Array, c: Array) -> Iterator[tuple[Array, Array, Array]]:
    if c.ndim == 2:
        yield a, b, c
    else:
        yield from ((a[g], b[g], c[g]) for g in range(c.shape[0]))


def _host_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float) -> None:
    if c.size == 0 or a.shape[1] == 0:
        return
    layout_c = _layout(c)
    if layout_c is not None and layout_c[0] == TRANS:
        # c^T += alpha b^T a^T describes a column-major c to row-major BLAS.
        a, b, c = b.T, a.T, c.T
        layout_c = _layout(c)
    blas = host_blas()
    layout_a, layout_b = _layout(a), _layout(b)
    # The blocked numpy product runs where SGEMM cannot be called: numpy has no OpenBLAS of its own (another
    # BLAS, or none), a dtype is not float32, or a view is one BLAS cannot describe (unaligned, or neither
    # axis unit-strided, or a negative or zero stride).
    if blas.sgemm is None or layout_a is None or layout_b is None or layout_c is None:
        _blocked_accumulate(a, b, c, alpha)
        return
    m, k = a.shape
    n = c.shape[1]
    blocks = reduction_blocks(m, n, k)

    def call(start: int, size: int, beta: float, target: np.ndarray, ld: int) -> None:
        blas.sgemm(ROW_MAJOR, layout_a[0], layout_b[0], m, n, size, alpha,
                   a.ctypes.data + start * a.strides[1], layout_a[1],
                   b.ctypes.data + start * b.strides[0], layout_b[1], beta, target.ctypes.data, ld)

    if len(blocks) == 1:
        call(0, k, 1.0, c, layout_c[1])
        return
    # Each call's sum lands in a slot of its own, the slots are added to c in call order, and every call runs
    # on one thread alone: the numbers are the same however many host threads share the calls.
    partial = np.empty((len(blocks), m, n), dtype=np.float32)

    def sums(part: slice) -> None:
        for index in range(part.start, part.stop):
            call(*blocks[index], 0.0, partial[index], n)

    with one_blas_thread():
        split_over(np, len(blocks), k * (m + n), sums)
    for block_sum in partial:
        np.add(c, block_sum, out=c)


def reduction_blocks(m: int, n: int, k: int) -> list[tuple[int, int]]:
    """(start, length) of the SGEMM calls summing an (m, k) x (k, n) product: one call, or calls of at most
    SMALL_CALL_MULTIPLY_ADDS each where the output has at most SMALL_OUTPUT values."""
    if m * n > SMALL_OUTPUT or m * n * k <= SMALL_CALL_MULTIPLY_ADDS:
        return [(0, k)]
    size = SMALL_CALL_MULTIPLY_ADDS // (m * n)
    return [(start, min(size, k - start)) for start in range(0, k, size)]


def _layout(matrix: np.ndarray) -> tuple[int, int] | None:
    """(CblasNoTrans or CblasTrans, leading dimension) of a float32 view for row-major BLAS, or None."""
    if matrix.dtype != np.float32 or not matrix.flags.aligned:
        return None
    if any(stride % matrix.itemsize for stride in matrix.strides):
        return None
    rows, cols = matrix.shape
    row_step, col_step = (stride // matrix.itemsize for stride in matrix.strides)
    if col_step == 1 or cols == 1:
        ld = row_step if rows > 1 else cols
        if ld >= max(1, cols):
            return NO_TRANS, ld
    if row_step == 1 or rows == 1:
        ld = col_step if cols > 1 else rows
        if ld >= max(1, rows):
            return TRANS, ld
    return None


def _blocked_accumulate(a: np.ndarray, b: np.ndarray, c: np.ndarray, alpha: float) -> None:
    """c += alpha * a @ b through numpy, a cache-sized block of rows of c at a time."""
    rows = max(1, BLOCK_BYTES // max(1, c.shape[1] * c.itemsize))
    block = np.empty((min(rows, c.shape[0]), c.shape[1]), dtype=np.result_type(a, b))
    for start in range(0, c.shape[0], rows):
        stop = min(start + rows, c.shape[0])
        product = block[: stop - start]
        np.matmul(a[start:stop], b, out=product)
        if alpha != 1.0:
            product *= alpha
        c[start:stop] += product
