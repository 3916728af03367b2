"""boost 1.74's uniform_real, uniform_01, bernoulli and uniform_int on mt19937, in float32 as Caffe."""

from __future__ import annotations

import numpy as np

from caffe_core.rng.mt19937 import Cursor, Mt19937
from caffe_core.rng.vectorised import draw

F32 = np.float32
TWO_TO_32 = F32(4294967296.0)  # float(2^32 - 1) + 1 in float, as boost's divisor


def uniform_real(stream: Mt19937, count: int, low: np.float32, high: np.float32) -> np.ndarray:
    """boost::uniform_real<float>(low, high): u / 2^32 * (high - low) + low, redrawn when it reaches high."""
    low, high = F32(low), F32(high)
    span = F32(high - low)

    def fast(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values = raw.astype(F32) / TWO_TO_32 * span + low
        return values, values < high

    def slow(cursor: Cursor, first: int) -> np.float32:
        value = F32(first) / TWO_TO_32 * span + low
        while not value < high:
            value = F32(cursor.next()) / TWO_TO_32 * span + low
        return value

    return draw(stream, count, fast, slow)


def uniform_01(cursor: Cursor) -> np.float32:
    """boost::uniform_01<float>: u * 2^-32, redrawn when it rounds to 1."""
    while True:
        value = F32(cursor.next()) * (F32(1) / TWO_TO_32)
        if value < F32(1):
            return value


def bernoulli(stream: Mt19937, count: int, p: np.float32) -> np.ndarray:
    """boost::bernoulli_distribution<float>(p): u <= p * (2^32 - 1) in float; p = 0 draws nothing."""
    if p == 0:
        return np.zeros(count, dtype=bool)
    return stream.raw(count).astype(F32) <= F32(p) * F32(4294967295.0)


def uniform_int(cursor: Cursor, high: int) -> int:
    """boost::uniform_int(0, high) for 0 < high < 2^32 - 1: u / bucket, redrawn past high."""
    brange = 0xFFFFFFFF
    bucket = brange // (high + 1) + (1 if brange % (high + 1) == high else 0)
    while True:
        value = cursor.next() // bucket
        if value <= high:
            return value
