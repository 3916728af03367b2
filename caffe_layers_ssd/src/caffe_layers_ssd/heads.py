"""The check DetectionOutput and MultiBoxLoss share: the loc and conf heads hold one prediction per prior."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.layer import Layer


def num_priors(layer: Layer, bottom: Sequence[Blob], loc_classes: int, classes: int,
               loc_values: int = 4) -> int:
    """The prior count of bottom 2 (1, 2, priors * 4), checked against loc (bottom 0) and conf (bottom 1)."""
    count = bottom[2].height // 4
    if count * loc_classes * loc_values != bottom[0].channels:
        raise layer.error(f"Number of priors must match number of location predictions: {count} priors x "
                          f"{loc_classes} location classes x {loc_values} != {bottom[0].channels} "
                          f"(loc shape {bottom[0].shape})")
    if count * classes != bottom[1].channels:
        raise layer.error(f"Number of priors must match number of confidence predictions: {count} priors x "
                          f"{classes} classes != {bottom[1].channels} (conf shape {bottom[1].shape})")
    return count
