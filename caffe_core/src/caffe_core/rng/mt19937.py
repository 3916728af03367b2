"""boost::mt19937 as Caffe seeds it, over numpy's MT19937, with raw draws that can be handed back."""

from __future__ import annotations

import numpy as np

MASK32 = 0xFFFFFFFF
FULL_RANGE = 1 << 32


class Mt19937:
    """A 32-bit Mersenne Twister stream; `unread` returns draws a vectorised distribution did not use.

    numpy's legacy RandomState seeds MT19937 with init_genrand, as boost's mt19937(seed) does, and its
    full-range uint32 draws are the generator's raw outputs.
    """

    def __init__(self, seed: int) -> None:
        self._bits = np.random.RandomState(seed & MASK32)
        self._returned = np.empty(0, dtype=np.uint32)

    def raw(self, count: int) -> np.ndarray:
        """The next `count` 32-bit outputs."""
        kept = self._returned[:count]
        self._returned = self._returned[count:]
        fresh = count - kept.size
        if fresh <= 0:
            return kept
        drawn = self._bits.randint(0, FULL_RANGE, size=fresh, dtype=np.uint32)
        return drawn if kept.size == 0 else np.concatenate([kept, drawn])

    def next(self) -> int:
        """One 32-bit output (Caffe's caffe_rng_rand)."""
        return int(self.raw(1)[0])

    def unread(self, values: np.ndarray) -> None:
        """Puts draws back, to be read again first, in order."""
        if values.size:
            self._returned = np.concatenate([values.astype(np.uint32), self._returned])


class Cursor:
    """Reads a block of raw draws in order, then the stream beyond it."""

    def __init__(self, block: np.ndarray, stream: Mt19937) -> None:
        self.block, self.stream, self.pos = block, stream, 0

    def next(self) -> int:
        """The next raw draw."""
        self.pos += 1
        if self.pos <= self.block.size:
            return int(self.block[self.pos - 1])
        return self.stream.next()
