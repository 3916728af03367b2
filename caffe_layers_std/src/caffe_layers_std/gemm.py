"""c += a @ b without a temporary the size of c, as Caffe's gemm with beta = 1 (param diffs accumulate).

On the host the product is formed a block of rows at a time in a cache-sized buffer and added into c. It
uses numpy's own BLAS on purpose: a second BLAS library (scipy's bundles another OpenBLAS) keeps its
threads spinning after each call, which halves the speed of the next numpy product on a small machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

BLOCK_BYTES = 8 * 2 ** 20


def gemm_accumulate(a: Any, b: Any, c: Any) -> None:
    """Adds the matrix product a @ b into c in place (by blocks of rows of c on the host)."""
    if not isinstance(c, np.ndarray):
        c += a @ b
        return
    rows = max(1, BLOCK_BYTES // max(1, c.shape[1] * c.itemsize))
    if rows >= c.shape[0]:
        c += a @ b
        return
    block = np.empty((rows, c.shape[1]), dtype=np.result_type(a, b))
    for start in range(0, c.shape[0], rows):
        stop = min(start + rows, c.shape[0])
        product = block[: stop - start]
        np.matmul(a[start:stop], b, out=product)
        c[start:stop] += product
