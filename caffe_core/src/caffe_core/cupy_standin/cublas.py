"""cupy.cublas on the stand-in: gemm, with cupy's signature, checks and refusals, and nothing else."""

from __future__ import annotations

from typing import Any

import numpy as np

from caffe_core.cupy_standin.array import missing, ndarray

# cuBLAS's cublasOperation_t values, which cupy accepts beside 'N', 'T' and 'H'.
CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C = 0, 1, 2


def gemm(transa: Any, transb: Any, a: ndarray, b: ndarray, out: ndarray | None = None, alpha: Any = 1.0,
         beta: Any = 0.0) -> ndarray:
    """out = alpha * op(a) @ op(b) + beta * out, written into `out` when given (a new array otherwise)."""
    for name, value in (("a", a), ("b", b), ("out", out)):
        if value is not None and not isinstance(value, ndarray):
            raise TypeError(f"cupy.cublas.gemm: {name} must be a device array, got {type(value)}; copy host "
                            f"data with cupy.asarray first")
    if not a.ndim == b.ndim == 2:
        raise AssertionError(f"cupy.cublas.gemm needs 2-D a and b, got {a.ndim}-D and {b.ndim}-D")
    if a.dtype != b.dtype:
        raise AssertionError(f"cupy.cublas.gemm: a is {a.dtype}, b is {b.dtype}")
    if a.dtype.char not in "fdFD":
        raise TypeError("invalid dtype")
    op_a, op_b = _op(transa, a._array), _op(transb, b._array)
    m, k = op_a.shape
    if op_b.shape[0] != k:
        raise AssertionError(f"cupy.cublas.gemm: op(a) is {op_a.shape}, op(b) is {op_b.shape}")
    n = op_b.shape[1]
    if out is None:
        out = ndarray._adopt(np.empty((m, n), dtype=a.dtype, order="F"))
        beta = 0.0
    elif out.ndim != 2 or out.shape != (m, n) or out.dtype != a.dtype:
        raise AssertionError(f"cupy.cublas.gemm: out is {out.shape} {out.dtype}, expected {(m, n)} {a.dtype}")
    product = _scalar(alpha, a.dtype) * (op_a @ op_b)
    beta = _scalar(beta, a.dtype)
    # As cuBLAS, beta == 0 does not read out (whatever it holds, NaN included, is overwritten).
    out._array[...] = product if beta == 0 else product + beta * out._array
    return out


def _op(trans: Any, matrix: np.ndarray) -> np.ndarray:
    if trans in ("N", CUBLAS_OP_N):
        return matrix
    if trans in ("T", CUBLAS_OP_T):
        return matrix.T
    if trans in ("H", CUBLAS_OP_C):
        return matrix.T.conj()
    raise TypeError(f"invalid trans (actual: {trans})")


def _scalar(value: Any, dtype: np.dtype) -> Any:
    """alpha or beta as cupy reads them: a device array's value, or a host number in the operands' dtype."""
    if isinstance(value, ndarray):
        return value._array.astype(dtype)
    return np.asarray(value, dtype=dtype)


def __getattr__(name: str) -> Any:
    raise missing("cupy.cublas", name)
