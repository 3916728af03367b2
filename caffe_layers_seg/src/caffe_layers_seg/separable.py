"""Resampling that acts on rows and columns separately: y = R x C^T per (num, channel) plane.

Layers whose forks have no backward (or whose forward order does not matter to their gradient) take their
gradient as dx = R^T dy C, with R and C built on the host from each output row's and column's source rows
and columns and weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule


def weight_matrix(size: int, sources: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """(len, size) float32 matrix summing weight[i] at column index[i] per pair; index -1 adds nothing."""
    count = len(sources[0][0])
    matrix = np.zeros((count, size), dtype=np.float64)
    rows = np.arange(count)
    for index, weight in sources:
        index = np.asarray(index, dtype=np.int64)
        keep = index >= 0
        np.add.at(matrix, (rows[keep], index[keep]), np.asarray(weight, dtype=np.float64)[keep])
    return matrix.astype(np.float32)


def selection_matrix(index: np.ndarray, size: int) -> np.ndarray:
    """(len, size) float32 matrix with a 1 at (i, index[i]); rows whose index is -1 are zero."""
    return weight_matrix(size, [(index, np.ones(len(index)))])


def transposed(xp: ArrayModule, rows: np.ndarray, top_diff: Array, cols: np.ndarray) -> Array:
    """R^T dy C for dy of shape (N, C, len(rows), len(cols)): the adjoint of y = R x C^T."""
    return xp.matmul(xp.matmul(xp.asarray(rows.T), top_diff), xp.asarray(cols))


def scatter_taps(xp: ArrayModule, bottom_diff: Array, top_diff: Array,
                 taps: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
    """Adds top_diff * weight at each tap's (input plane position, weight) per output, in the forks' order."""
    # Sums run over output positions, then taps, as the forks' loops: numpy's add.at rounds as they do.
    planes = bottom_diff.shape[0] * bottom_diff.shape[1]
    plane = bottom_diff.shape[2] * bottom_diff.shape[3]
    positions = xp.asarray(np.stack([p for p, _ in taps], axis=1).astype(np.int64))
    weights = xp.asarray(np.stack([w for _, w in taps], axis=1).astype(np.float32))
    targets = xp.arange(planes, dtype=np.int64).reshape(planes, 1, 1) * plane + positions[None]
    values = top_diff.reshape(planes, -1, 1) * weights[None]
    xp.add.at(bottom_diff.reshape(-1), targets.reshape(-1), values.reshape(-1))
