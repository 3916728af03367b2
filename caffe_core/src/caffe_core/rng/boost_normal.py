"""boost 1.74's normal_distribution<float>: a 128-layer ziggurat, its tail from two exponential draws."""

from __future__ import annotations

import numpy as np

from caffe_core.rng.boost_uniform import uniform_01
from caffe_core.rng.mt19937 import Cursor, Mt19937
from caffe_core.rng.ziggurat_tables import EXPONENTIAL_X, EXPONENTIAL_Y, NORMAL_X, NORMAL_Y

F32 = np.float32
TWO_TO_MINUS_24 = F32(2.0**-24)


def int_float_pair(raw: int) -> tuple[np.float32, int]:
    """boost's generate_int_float_pair<float, 8>: the low 8 bits pick the layer, the high 24 the float."""
    return F32(raw >> 8) * TWO_TO_MINUS_24, raw & 0xFF


def unit_exponential(cursor: Cursor) -> np.float32:
    """boost's unit_exponential_distribution<float> (256-layer ziggurat)."""
    shift = F32(0)
    while True:
        r, i = int_float_pair(cursor.next())
        x = r * F32(EXPONENTIAL_X[i])
        if x < F32(EXPONENTIAL_X[i + 1]):
            return shift + x
        if i == 0:
            shift += F32(EXPONENTIAL_X[1])
            continue
        y01 = uniform_01(cursor)
        y = F32(EXPONENTIAL_Y[i]) + y01 * F32(EXPONENTIAL_Y[i + 1] - EXPONENTIAL_Y[i])
        x_i, x_next, y_next = F32(EXPONENTIAL_X[i]), F32(EXPONENTIAL_X[i + 1]), F32(EXPONENTIAL_Y[i + 1])
        above_upper = F32(EXPONENTIAL_X[i] - EXPONENTIAL_X[i + 1]) * y01 - (x_i - x)
        above_lower = y - (y_next + (x_next - x) * y_next)
        if above_upper < 0 and (above_lower < 0 or y < np.exp(-x)):
            return x + shift


def _normal_tail(cursor: Cursor) -> np.float32:
    start = F32(NORMAL_X[1])
    while True:
        x = unit_exponential(cursor) / start
        y = unit_exponential(cursor) / F32(1)
        if F32(2) * y > x * x:
            return x + start


def _unit_normal_from(cursor: Cursor, first: int) -> np.float32:
    raw = first
    while True:
        r, bucket = int_float_pair(raw)
        sign = F32((bucket & 1) * 2 - 1)
        i = bucket >> 1
        x = r * F32(NORMAL_X[i])
        if x < NORMAL_X[i + 1]:
            return x * sign
        if i == 0:
            return _normal_tail(cursor) * sign
        y01 = uniform_01(cursor)
        y = F32(NORMAL_Y[i]) + y01 * F32(NORMAL_Y[i + 1] - NORMAL_Y[i])
        chord = F32(NORMAL_X[i] - NORMAL_X[i + 1]) * y01 - (F32(NORMAL_X[i]) - x)
        tangent = y - (F32(NORMAL_Y[i]) + (F32(NORMAL_X[i]) - x) * F32(NORMAL_Y[i]) * F32(NORMAL_X[i]))
        above_upper, above_lower = (chord, tangent) if NORMAL_X[i] >= 1 else (tangent, chord)
        if above_upper < 0 and (above_lower < 0 or y < np.exp(-(x * x / F32(2)))):
            return x * sign
        raw = cursor.next()


NORMAL_X32, NORMAL_Y32 = NORMAL_X.astype(F32), NORMAL_Y.astype(F32)
STEP_X32 = (NORMAL_X[:-1] - NORMAL_X[1:]).astype(F32)  # RealType(table_x[i] - table_x[i+1])
STEP_Y32 = (NORMAL_Y[1:] - NORMAL_Y[:-1]).astype(F32)  # RealType(table_y[i+1] - table_y[i])


def _float32_ceiling(values: np.ndarray) -> np.ndarray:
    """The least float32 >= each double, so that float32 x < it exactly when x < the double."""
    rounded = values.astype(F32)
    return np.where(rounded < values, np.nextafter(rounded, F32(np.inf)), rounded)


NEXT_X_CEIL32 = _float32_ceiling(NORMAL_X[1:])


def _attempts(block: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per raw draw taken as an attempt's first draw: its value, whether it is a one-draw attempt (fast),
    whether a two-draw attempt (with the next draw as y01) accepts, and whether replaying it needs the
    scalar algorithm (the tail, a y01 that rounds to 1, or a y01 past the block)."""
    bucket = block & 0xFF
    layer = bucket >> 1
    x = (block >> 8).astype(F32) * TWO_TO_MINUS_24 * NORMAL_X32[layer]
    values = np.where(bucket & 1, x, -x)
    fast = x < NEXT_X_CEIL32[layer]
    accept = np.zeros(block.size, dtype=bool)
    hard = np.zeros(block.size, dtype=bool)
    slow = np.flatnonzero(~fast)
    i, xs = layer[slow], x[slow]
    follows = np.minimum(slow + 1, block.size - 1)
    y01 = np.where(slow + 1 < block.size, block[follows].astype(F32) * (F32(1) / F32(4294967296.0)), F32(1))
    y = NORMAL_Y32[i] + y01 * STEP_Y32[i]
    step_x = STEP_X32[i]
    chord = step_x * y01 - (NORMAL_X32[i] - xs)
    tangent = y - (NORMAL_Y32[i] + (NORMAL_X32[i] - xs) * NORMAL_Y32[i] * NORMAL_X32[i])
    convex = NORMAL_X[i] >= 1
    above_upper = np.where(convex, chord, tangent)
    above_lower = np.where(convex, tangent, chord)
    with np.errstate(over="ignore", under="ignore"):
        accept[slow] = (above_upper < 0) & ((above_lower < 0) | (y < np.exp(-(xs * xs / F32(2)))))
    hard[slow] = (i == 0) | (y01 >= 1)
    return values, fast, accept, hard


def _unit_normals(stream: Mt19937, count: int) -> np.ndarray:
    """`count` unit normals, as boost draws them one after another from the stream."""
    parts: list[np.ndarray] = []
    need = count
    while need > 0:
        block = stream.raw(need + need // 16 + 64)
        need, used = _from_block(stream, block, need, parts)
        if used < block.size:
            stream.unread(block[used:])
    return np.concatenate(parts) if parts else np.empty(0, F32)


def _from_block(stream: Mt19937, block: np.ndarray, need: int, parts: list[np.ndarray]) -> tuple[int, int]:
    """Appends up to `need` values drawn from the block (and, replaying a hard attempt, beyond it); returns
    how many are still needed and how many of the block's draws were used."""
    values, fast, accept, hard = _attempts(block)
    slow, size = ~fast, block.size
    # An attempt starts at a draw unless that draw is the y01 of a two-draw attempt just before it; a run
    # of slow draws begins with an attempt (its predecessor is fast), then every other draw does.
    positions = np.arange(size)
    run_begins = slow & np.concatenate(([True], fast[:-1]))
    offset = positions - np.maximum.accumulate(np.where(run_begins, positions, 0))
    slow_start = slow & (offset % 2 == 0)
    starts = (fast | slow_start) & ~np.concatenate(([False], slow_start[:-1]))
    emitting = np.flatnonzero(starts & (fast | accept) & ~hard)
    hard_starts = np.flatnonzero(starts & hard)
    pos = 0
    while need > 0 and pos < size:
        next_hard = np.searchsorted(hard_starts, pos)
        stop = int(hard_starts[next_hard]) if next_hard < hard_starts.size else size
        segment = emitting[np.searchsorted(emitting, pos): np.searchsorted(emitting, stop)]
        if segment.size >= need:
            last = int(segment[need - 1])
            parts.append(values[segment[:need]])
            return 0, last + (1 if fast[last] else 2)
        parts.append(values[segment])
        need -= segment.size
        if stop == size:
            return need, size
        # Replay the hard attempt, then follow the chain by hand until it meets the precomputed one again
        # (just past the next fast draw, which always ends an attempt).
        cursor = Cursor(block, stream)
        pos = stop
        while need > 0 and pos < size and (slow[pos] or pos == stop):
            if hard[pos]:
                cursor.pos = pos + 1
                parts.append(np.array([_unit_normal_from(cursor, int(block[pos]))], dtype=F32))
                need, pos = need - 1, cursor.pos
            else:
                if accept[pos]:
                    parts.append(values[pos: pos + 1])
                    need -= 1
                pos += 2
        if need > 0 and pos < size:
            parts.append(values[pos: pos + 1])
            need, pos = need - 1, pos + 1
    return need, pos


def normal(stream: Mt19937, count: int, mean: np.float32, sigma: np.float32) -> np.ndarray:
    """boost::normal_distribution<float>(mean, sigma): unit draws * sigma + mean, in float."""
    return _unit_normals(stream, count) * F32(sigma) + F32(mean)
