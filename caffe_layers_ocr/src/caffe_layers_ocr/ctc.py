"""Connectionist temporal classification as Baidu's warp-ctc computes it (its CPU cost_and_grad), which both
OCR forks' CTC losses call: per sequence, the cost -log p(labels | activations) and its gradient w.r.t. the
unnormalised activations (warp-ctc takes the softmax over the classes itself).

Log-space alpha/beta recursions over the extended label sequence (a blank before, between and after the
labels), vectorised over the batch and the label positions; the one loop is over time steps. As in
warp-ctc, beta includes the emission at its own step, so alpha * beta / y is the occupancy of a state, and
a sequence whose labels cannot fit its steps (labels + repeated neighbours > steps) costs 0 with a zero
gradient. Steps at or beyond a sequence's length get a zero gradient.
"""

from __future__ import annotations

import numpy as np

from caffe_core.array_types import Array, ArrayModule

NEG_INF = -np.inf


def _log_sum3(xp: ArrayModule, a: Array, b: Array, c: Array) -> Array:
    """log(exp a + exp b + exp c), element-wise, -inf where all three are -inf (no warnings)."""
    top = xp.maximum(xp.maximum(a, b), c)
    finite = top > NEG_INF
    shift = xp.where(finite, top, 0.0)
    total = xp.exp(a - shift) + xp.exp(b - shift) + xp.exp(c - shift)
    return xp.where(finite, shift + xp.log(xp.where(finite, total, 1.0)), NEG_INF)


def log_softmax(xp: ArrayModule, activations: Array) -> Array:
    """log softmax over the last axis, in float64."""
    x = activations.astype(np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - xp.log(xp.exp(x).sum(axis=-1, keepdims=True))


def ctc_cost_and_grad(xp: ArrayModule, activations: Array, labels: Array, label_lengths: Array,
                      input_lengths: Array, blank: int) -> tuple[Array, Array]:
    """Costs (N,) and gradients (T, N, C), both float64, of activations (T, N, C).

    `labels` (N, L) holds sequence n's labels in [n, :label_lengths[n]] (the rest is ignored);
    `input_lengths` (N,) the steps each sequence uses (at most T).
    """
    steps, num, _ = activations.shape
    labels = labels.astype(np.int64)
    label_lengths = label_lengths.astype(np.int64)
    input_lengths = input_lengths.astype(np.int64)
    width = labels.shape[1]
    states = 2 * width + 1
    log_probs = log_softmax(xp, activations)

    # The extended sequences: blank, l1, blank, l2, ..., blank; states past 2 L_n + 1 are not used.
    ext = xp.full((num, states), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    state = xp.arange(states)
    used = state[None, :] < (2 * label_lengths + 1)[:, None]
    # A label state may be entered from two states back unless that state holds the same label.
    skip = xp.zeros((num, states), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    rows = xp.arange(num)
    emit = xp.where(used[None], log_probs[:, rows[:, None], ext], NEG_INF)  # (T, N, S)

    pad = xp.full((num, 2), NEG_INF)
    alpha = xp.full((steps, num, states), NEG_INF)
    first = xp.full((num, states), NEG_INF)
    first[:, :2] = emit[0, :, :2]
    alpha[0] = first
    for t in range(1, steps):
        shifted = xp.concatenate([pad, alpha[t - 1]], axis=1)
        two_back = xp.where(skip, shifted[:, :states], NEG_INF)
        alpha[t] = _log_sum3(xp, alpha[t - 1], shifted[:, 1:states + 1], two_back) + emit[t]

    last_step = xp.maximum(input_lengths - 1, 0)
    final = alpha[last_step, rows]  # (N, S)
    end = 2 * label_lengths  # the final blank's state
    last_label = xp.maximum(end - 1, 0)
    log_z = _log_sum3(xp, final[rows, end], xp.where(label_lengths > 0, final[rows, last_label], NEG_INF),
                      xp.full((num,), NEG_INF))

    # Betas (with the emission of their own step), from each sequence's last step down.
    skip_ahead = xp.concatenate([skip[:, 2:], xp.zeros((num, 2), dtype=bool)], axis=1)
    ends = ((state[None, :] == end[:, None])
            | ((state[None, :] == last_label[:, None]) & (label_lengths > 0)[:, None]))
    beta = xp.full((steps, num, states), NEG_INF)
    following = xp.full((num, states), NEG_INF)
    for t in range(steps - 1, -1, -1):
        shifted = xp.concatenate([following, pad], axis=1)
        two_ahead = xp.where(skip_ahead, shifted[:, 2:], NEG_INF)
        inner = _log_sum3(xp, following, shifted[:, 1:states + 1], two_ahead) + emit[t]
        start = xp.where(ends, emit[t], NEG_INF)
        step = (input_lengths - 1 == t)[:, None]
        inside = (input_lengths - 1 > t)[:, None]
        beta[t] = xp.where(step, start, xp.where(inside, inner, NEG_INF))
        following = beta[t]

    repeats = ((labels[:, 1:] == labels[:, :-1])
               & (xp.arange(1, width)[None, :] < label_lengths[:, None])).sum(axis=1)
    fits = (label_lengths + repeats <= input_lengths) & (input_lengths > 0)
    finite_z = fits & (log_z > NEG_INF)
    safe_z = xp.where(finite_z, log_z, 0.0)
    safe_emit = xp.where(emit > NEG_INF, emit, 0.0)
    occupancy = xp.exp(alpha + beta - safe_emit - safe_z[None, :, None])  # (T, N, S)
    # Each class's summed occupancy per step (a state's class is its extended label): a scatter-add, so that
    # nothing the size of (N, S, C) is built for large alphabets.
    per_class = xp.zeros(log_probs.shape)
    shape = occupancy.shape
    where = (xp.broadcast_to(xp.arange(steps)[:, None, None], shape),
             xp.broadcast_to(rows[None, :, None], shape), xp.broadcast_to(ext[None], shape))
    xp.add.at(per_class, where, occupancy)
    active = (xp.arange(steps)[:, None] < input_lengths[None, :]) & fits[None, :]
    grad = xp.where(active[:, :, None], xp.exp(log_probs) - per_class, 0.0)
    costs = xp.where(fits, -log_z, 0.0)
    return costs, grad


def compact_labels(xp: ArrayModule, labels: Array, keep: Array) -> tuple[Array, Array]:
    """Each row's kept labels moved to its front (in order), and their number per row."""
    num, width = labels.shape
    lengths = keep.sum(axis=1)
    position = xp.cumsum(keep, axis=1) - 1
    out = xp.zeros((num, width), dtype=np.int64)
    rows = xp.broadcast_to(xp.arange(num)[:, None], (num, width))
    out[rows[keep], position[keep]] = labels[keep]
    return out, lengths

