"""NeuronLayer: the base of Caffe's element-wise layers (one bottom, one top of its shape); shared math."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from caffe_core.blob import Blob
from caffe_core.layer import Layer


class NeuronLayer(Layer):
    """One bottom, one top shaped like it; in-place use is allowed unless a subclass refuses it."""

    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Gives the top the bottom's shape."""
        top[0].reshape_like(bottom[0])


def scale_and_shift(x: Any, scale: float, shift: float) -> Any:
    """shift + scale x, skipping a multiplication by 1 and an addition of 0 as Caffe does."""
    if scale != 1:
        x = x * scale
    if shift != 0:
        x = x + shift
    return x


def log_of_base(layer: Layer, base: float, field: str) -> float:
    """ln(base) for an Exp/Log `base` field, -1 meaning e; refuses a base that is not strictly positive."""
    if base == -1:
        return 1.0
    if base <= 0:
        raise layer.error(f"{field} must be strictly positive (or -1 for e), got {base}")
    return math.log(base)
