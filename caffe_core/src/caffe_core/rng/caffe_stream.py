"""Caffe's RNG: one seeded mt19937 read through Caffe's caffe_rng_* functions and caffe::shuffle."""

from __future__ import annotations

import os
from collections.abc import MutableSequence, Sequence
from typing import TypeVar

import numpy as np

from caffe_core.rng import boost_normal, boost_uniform
from caffe_core.rng.mt19937 import Cursor, Mt19937

T = TypeVar("T")

F32 = np.float32


def entropy_seed() -> int:
    """A seed from the OS, as Caffe's cluster_seedgen when no seed is set."""
    return int.from_bytes(os.urandom(4), "little")


class CaffeStream:
    """Caffe::RNG: `rand()`, `uniform`, `gaussian`, `bernoulli`, `shuffle`, all from one mt19937."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = entropy_seed() if seed is None else int(seed) & 0xFFFFFFFF
        self._mt: Mt19937 | None = None

    @property
    def mt(self) -> Mt19937:
        """The generator, made at the first draw (re-seeding often, as gradient checks do, stays cheap)."""
        if self._mt is None:
            self._mt = Mt19937(self.seed)
        return self._mt

    def rand(self) -> int:
        """caffe_rng_rand(): one raw 32-bit draw."""
        return self.mt.next()

    def rand_many(self, count: int) -> np.ndarray:
        """`count` successive rand() draws, as int64."""
        return self.mt.raw(count).astype(np.int64)

    def rand_below(self, n: int) -> int:
        """rand() % n, as DataTransformer::Rand and the data layers' skips draw."""
        return self.rand() % n

    def uniform(self, shape: int | Sequence[int], low: float, high: float) -> np.ndarray:
        """caffe_rng_uniform(n, low, high): boost::uniform_real(low, nextafter(high)) in float32."""
        low32, high32 = F32(low), F32(high)
        if not low32 <= high32:
            raise ValueError(f"uniform draw needs low <= high (Caffe's CHECK_LE), got low {low}, high {high}")
        top = np.nextafter(high32, F32(np.finfo(F32).max))
        count = int(np.prod(shape))
        return boost_uniform.uniform_real(self.mt, count, low32, top).reshape(shape)

    def gaussian(self, shape: int | Sequence[int], mean: float, sigma: float) -> np.ndarray:
        """caffe_rng_gaussian(n, mean, sigma): boost::normal_distribution<float> in float32."""
        if not F32(sigma) > 0:
            raise ValueError(f"gaussian draw needs sigma > 0, got {sigma}")
        count = int(np.prod(shape))
        return boost_normal.normal(self.mt, count, F32(mean), F32(sigma)).reshape(shape)

    def bernoulli(self, shape: int | Sequence[int], p: float | np.floating) -> np.ndarray:
        """caffe_rng_bernoulli(n, p): each true with probability p (boost::bernoulli_distribution<float>)."""
        if not 0 <= F32(p) <= 1:
            raise ValueError(f"bernoulli draw needs 0 <= p <= 1, got {p}")
        return boost_uniform.bernoulli(self.mt, int(np.prod(shape)), F32(p)).reshape(shape)

    def shuffle(self, items: MutableSequence[T]) -> None:
        """caffe::shuffle: Fisher-Yates from the end, each swap index from boost::uniform_int(0, i)."""
        cursor = Cursor(np.empty(0, dtype=np.uint32), self.mt)
        for i in range(len(items) - 1, 0, -1):
            j = boost_uniform.uniform_int(cursor, i)
            items[i], items[j] = items[j], items[i]

    def child(self) -> CaffeStream:
        """A new stream seeded from one draw of this one, as Caffe seeds a prefetch thread or transformer."""
        return CaffeStream(self.rand())
