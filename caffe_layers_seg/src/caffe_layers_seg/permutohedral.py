"""The modified permutohedral lattice of torrvision/caffe (CRF-as-RNN), `util/modified_permutohedral.cpp` at
d779ee369bf86739bc225d99e78aefa040da199f: Gaussian filtering of values at points with position features
(Adams et al. 2010), as its SSE build on x86-64 computes it.

The lattice is built on the host (integer keys and a first-come numbering, as the fork's hash table gives),
for several images at once (an image index leads each key, so images never share a lattice point); the
filtering (splat, blur, slice) runs on either side through `xp`. Float arithmetic follows the fork's order
of operations in float32, so CPU results equal the fork's bit for bit where the order of summation is the
fork's (np.add.at sums in index order, as the fork's splat loop does).
"""

from __future__ import annotations

import numpy as np

from caffe_core.array_types import Array, ArrayModule

F32 = np.float32
# The fork's SSE init works on blocks of four points and hashes the lattice points of the zero-feature
# points that pad the last block; those points take part in the blur as relays.
SSE_BLOCK = 4


def _elevate(features: np.ndarray) -> np.ndarray:
    """The points lifted onto the plane x_0 + ... + x_d = 0 (E f of Adams et al., p.5), (P, d + 1)."""
    dims = features.shape[1]
    inv_std_dev = F32(np.sqrt(2.0 / 3.0) * (dims + 1))
    scale = [F32(1.0 / np.sqrt((i + 2) * (i + 1)) * float(inv_std_dev)) for i in range(dims)]
    elevated = np.empty((features.shape[0], dims + 1), F32)
    running = np.zeros(features.shape[0], F32)
    for j in range(dims, 0, -1):
        scaled = features[:, j - 1] * scale[j - 1]
        elevated[:, j] = running - F32(j) * scaled
        running = running + scaled
    elevated[:, 0] = running
    return elevated


def _simplices(elevated: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each point's enclosing simplex: the remainder-0 vertex, the ranks and the barycentric weights."""
    points, dims1 = elevated.shape
    dims = dims1 - 1
    down = F32(F32(1.0) / F32(dims1))
    rounded = np.rint(down * elevated)
    rem0 = rounded * F32(dims1)
    total = np.zeros(points, F32)
    for i in range(dims1):
        total = total + rounded[:, i]
    diff = elevated - rem0
    less = diff[:, :, None] < diff[:, None, :]
    upper = np.triu(np.ones((dims1, dims1), bool), 1)
    rank = (less & upper).sum(axis=2) + (~less & upper).sum(axis=1)
    rank = rank.astype(F32) + total[:, None]
    shift = np.where(rank < 0, F32(dims1), F32(0)) - np.where(rank >= dims1, F32(dims1), F32(0))
    rank = rank + shift
    rem0 = rem0 + shift
    rank_int = rank.astype(np.int64)
    value = (elevated - rem0) * down
    rows = np.arange(points)[:, None]
    plus = np.zeros((points, dims + 2), F32)
    minus = np.zeros((points, dims + 2), F32)
    plus[rows, dims - rank_int] = value
    minus[rows, dims - rank_int + 1] = value
    barycentric = plus - minus
    barycentric[:, 0] = barycentric[:, 0] + (F32(1) + barycentric[:, dims + 1])
    return rem0.astype(np.int64), rank_int, barycentric[:, :dims1]


def _vertex_keys(rem0: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """The d-coordinate keys of each point's d + 1 simplex vertices, (P, d + 1, d)."""
    dims = rank.shape[1] - 1
    remainder = np.arange(dims + 1)[:, None]
    canonical = np.where(np.arange(dims + 1)[None, :] <= dims - remainder, remainder, remainder - (dims + 1))
    # key[p, r, i] = rem0[p, i] + canonical[r, rank[p, i]] for the first d coordinates
    return rem0[:, None, :dims] + canonical[:, rank[:, :dims]].transpose(1, 0, 2)


def _group_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal integer rows grouped: each row's group id and each group's first row (a stable sort of the rows
    packed into one int64 where their ranges allow, else a lexicographic sort; both far faster than
    np.unique(axis=0))."""
    low = rows.min(axis=0)
    spans = [int(s) for s in rows.max(axis=0) - low + 1]
    if float(np.prod(np.asarray(spans, np.float64))) < 2.0 ** 62:
        strides = np.cumprod([1, *spans[:0:-1]])[::-1].astype(np.int64)
        packed = (rows - low) @ strides
        order = np.argsort(packed, kind="stable")
        ordered = packed[order]
        starts = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    else:
        order = np.lexsort(rows.T[::-1])
        ordered_rows = rows[order]
        starts = np.concatenate([[True], (ordered_rows[1:] != ordered_rows[:-1]).any(axis=1)])
    group = np.empty(len(rows), np.int64)
    group[order] = np.cumsum(starts) - 1
    # both sorts are stable, so a group's first row in sorted order is its first row in the input
    return group, order[starts]


class PermutohedralLattice:
    """The lattices of a batch of images: (B, N, d) position features in, filtering of (B, C, N) values."""

    def __init__(self, features: np.ndarray, xp: ArrayModule) -> None:
        batch, count, dims = features.shape
        padded = -(-count // SSE_BLOCK) * SSE_BLOCK
        feats = np.zeros((batch, padded, dims), F32)
        feats[:, :count] = features
        rem0, rank, barycentric = _simplices(_elevate(feats.reshape(-1, dims)))
        keys = _vertex_keys(rem0, rank)
        image = np.repeat(np.arange(batch), padded * (dims + 1))[:, None]
        flat = np.concatenate([image, keys.reshape(-1, dims)], axis=1)
        group, first = _group_rows(flat)
        order = np.argsort(first, kind="stable")
        number = np.empty(len(first), np.int64)
        number[order] = np.arange(len(first))
        self.size = len(first)
        self.dims = dims
        self.batch, self.count = batch, count
        offsets = number[group].reshape(batch, padded, dims + 1)[:, :count]
        self.offsets = xp.asarray(offsets.reshape(batch * count, dims + 1) + 1)
        self.barycentric = xp.asarray(barycentric.reshape(batch, padded, dims + 1)[:, :count]
                                      .reshape(batch * count, dims + 1))
        self.neighbours = xp.asarray(self._neighbours(flat[first[order]]))
        self.alpha = F32(F32(1) / (F32(1) + F32(2.0 ** -dims)))

    def _neighbours(self, points: np.ndarray) -> np.ndarray:
        """(d + 1, 2, M) indices (shifted by one; 0: absent) of each point's two neighbours per direction."""
        dims, size = self.dims, self.size
        # direction j: n1 = key - 1 but n1[j] = key[j] + d, n2 = key + 1 but n2[j] = key[j] - d (j < d)
        first = np.full((dims + 1, dims), -1, np.int64)
        first[np.arange(dims), np.arange(dims)] = dims
        moves = np.concatenate([np.zeros((dims + 1, 1), np.int64), first], axis=1)
        moves = np.stack([moves, -moves], axis=1)
        wanted = points[None, None, :, :] + moves[:, :, None, :]
        both = np.concatenate([points, wanted.reshape(-1, dims + 1)], axis=0)
        group, first = _group_rows(both)
        found = np.zeros(len(first), np.int64)
        found[group[:size]] = np.arange(1, size + 1)
        return found[group[size:]].reshape(dims + 1, 2, size)

    def compute(self, xp: ArrayModule, values: Array, reverse: bool = False,
                out: Array | None = None) -> Array:
        """The fork's `compute(out, in, value_size, reverse, add)` for (B, C, N) values; `out` given is add.

        value_size <= 2 runs the fork's seqCompute, a larger one its sseCompute (they round the slice
        differently)."""
        batch, channels, count = values.shape
        points = batch * count
        dims1 = self.dims + 1
        source = values.transpose(0, 2, 1).reshape(points, 1, channels)
        splat = (self.barycentric[:, :, None] * source).reshape(points * dims1, channels)
        lattice = xp.zeros((self.size + 1, channels), F32)
        xp.add.at(lattice, self.offsets.reshape(-1), splat)
        directions = range(self.dims, -1, -1) if reverse else range(dims1)
        for j in directions:
            near = self.neighbours[j]
            blurred = xp.zeros_like(lattice)
            # old + 0.5 (n1 + n2), rounded in the fork's order
            xp.add(xp.take(lattice, near[0], axis=0), xp.take(lattice, near[1], axis=0), out=blurred[1:])
            blurred[1:] *= F32(0.5)
            blurred[1:] += lattice[1:]
            lattice = blurred
        sequential = channels <= 2
        acc = None
        if sequential and out is not None:
            acc = out.transpose(0, 2, 1).reshape(points, channels)
        for j in range(dims1):
            vertex = xp.take(lattice, self.offsets[:, j], axis=0)
            if sequential:
                term = self.barycentric[:, j:j + 1] * vertex * self.alpha
            else:
                term = (self.barycentric[:, j:j + 1] * self.alpha) * vertex
            acc = term if acc is None else acc + term
        assert acc is not None
        if not sequential and out is not None:
            acc = out.transpose(0, 2, 1).reshape(points, channels) + acc
        return acc.reshape(batch, count, channels).transpose(0, 2, 1)
