"""c += a @ b without a temporary, as Caffe's gemm with beta = 1 (param diffs accumulate in place)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import blas


def gemm_accumulate(a: Any, b: Any, c: Any) -> None:
    """Adds the matrix product a @ b into c in place (BLAS sgemm with beta 1 on the host)."""
    if isinstance(c, np.ndarray) and c.dtype == np.float32 and c.flags.c_contiguous:
        # c is C-ordered, so c.T is the Fortran-ordered matrix BLAS updates: c.T += b.T @ a.T.
        blas.sgemm(1.0, b.T, a.T, beta=1.0, c=c.T, overwrite_c=1)
    else:
        c += a @ b
