"""Drawing many values at once when most take one raw draw and a few take more, in the stream's order."""

from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from caffe_core.rng.mt19937 import Cursor, Mt19937

FastPath = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
SlowPath = Callable[[Cursor, int], object]


def draw(stream: Mt19937, count: int, fast: FastPath, slow: SlowPath) -> np.ndarray:
    """`count` values: `fast(raws)` gives each raw draw's value and whether it stands alone; where it does
    not, `slow(cursor, raw)` replays the distribution from that draw on, reading further draws itself."""
    block = stream.raw(count)
    values, alone = fast(block)
    out = np.empty(count, dtype=values.dtype)
    redo = np.flatnonzero(~alone).tolist()
    cursor = Cursor(block, stream)
    filled = pos = 0
    while filled < count:
        if pos >= block.size:
            # Redraws used up the block (and maybe more): the rest comes from the stream as it is now.
            out[filled:] = draw(stream, count - filled, fast, slow)
            return out
        index = bisect.bisect_left(redo, pos)
        stop = redo[index] if index < len(redo) else block.size
        take = min(stop - pos, count - filled)
        out[filled: filled + take] = values[pos: pos + take]
        filled, pos = filled + take, pos + take
        if filled == count or pos >= block.size:
            continue
        cursor.pos = pos + 1
        out[filled] = slow(cursor, int(block[pos]))
        filled, pos = filled + 1, cursor.pos
    if pos < block.size:
        stream.unread(block[pos:])
    return out
