"""Caffe's GradientChecker: central differences against a layer's Backward, with Caffe's tolerances.

Usage mirrors Caffe's tests:

    checker = GradientChecker(1e-2, 1e-3)
    checker.check_gradient_exhaustive(layer, bottom, top)      # every top element, every input
    checker.check_gradient_eltwise(layer, bottom, top)         # element-wise layers
    checker.check_gradient(layer, bottom, top, check_bottom=0) # objective 1/2 sum(top^2)

`check_bottom = -1` checks every bottom and every learnable blob; `i >= 0` only bottom i (plus the
learnable blobs); `< -1` only the learnable blobs. `GradientChecker(..., check_params=False)` leaves the
learnable blobs out, for layers whose blob diff is an update rule rather than a gradient (SphereFace's
weights, center loss's centers). A point is checked when |x| is outside
[kink - kink_range, kink + kink_range]; the assertion is
|analytic - numeric| <= threshold * max(|analytic|, |numeric|, 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.layer import Layer


class GradientCheckError(AssertionError):
    """An analytic gradient disagrees with its finite-difference estimate."""


class GradientChecker:
    """Checks a layer's gradients by finite differences, as Caffe's test_gradient_check_util.hpp."""

    def __init__(self, stepsize: float, threshold: float, seed: int = 1701, kink: float = 0.0,
                 kink_range: float = -1.0, check_params: bool = True) -> None:
        self.stepsize = stepsize
        self.threshold = threshold
        self.seed = seed
        self.kink = kink
        self.kink_range = kink_range
        self.check_params = check_params

    def check_gradient(self, layer: Layer, bottom: Sequence[Blob], top: Sequence[Blob],
                       check_bottom: int = -1) -> None:
        """Sets the layer up and checks d(1/2 sum top^2)/d(inputs)."""
        layer.setup(bottom, top)
        self.check_gradient_single(layer, bottom, top, check_bottom, -1, -1)

    def check_gradient_exhaustive(self, layer: Layer, bottom: Sequence[Blob], top: Sequence[Blob],
                                  check_bottom: int = -1) -> None:
        """Sets the layer up and checks the gradient of every top element."""
        layer.setup(bottom, top)
        if not top:
            raise ValueError("exhaustive mode requires at least one top blob")
        for top_id, blob in enumerate(top):
            for index in range(blob.count):
                self.check_gradient_single(layer, bottom, top, check_bottom, top_id, index)

    def check_gradient_eltwise(self, layer: Layer, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Sets an element-wise layer up and checks d top_j / d bottom_j only."""
        layer.setup(bottom, top)
        if not top:
            raise ValueError("element-wise mode requires at least one top blob")
        for top_id, blob in enumerate(top):
            for index in range(blob.count):
                self.check_gradient_single(layer, bottom, top, -1, top_id, index, element_wise=True)

    def check_gradient_single(self, layer: Layer, bottom: Sequence[Blob], top: Sequence[Blob],
                              check_bottom: int, top_id: int, top_data_id: int,
                              element_wise: bool = False) -> None:
        """Checks one objective (one top element, or 1/2 sum top^2 when top_id < 0)."""
        if element_wise:
            if layer.blobs:
                raise ValueError("element-wise checks need a layer without learnable blobs")
            if top_id < 0 or top_data_id < 0:
                raise ValueError("element-wise checks need a top element")
            if any(t.count != bottom[0].count for t in top) or any(b.count != top[0].count for b in bottom):
                raise ValueError("element-wise checks need tops and bottoms of one size")
        to_check: list[tuple[str, Blob]] = []
        for i, blob in enumerate(layer.blobs if self.check_params else ()):
            blob.mutable_cpu_diff()[...] = 0
            to_check.append((f"param {i}", blob))
        propagate_down = [check_bottom == -1] * len(bottom)
        if check_bottom == -1:
            to_check.extend((f"bottom {i}", b) for i, b in enumerate(bottom))
        elif check_bottom >= 0:
            if check_bottom >= len(bottom):
                raise ValueError(f"check_bottom {check_bottom} but the layer has {len(bottom)} bottoms")
            to_check.append((f"bottom {check_bottom}", bottom[check_bottom]))
            propagate_down[check_bottom] = True
        if not to_check:
            raise ValueError("no blobs to check")

        runtime.set_random_seed(self.seed)
        layer.forward(bottom, top)
        _objective_and_gradient(top, top_id, top_data_id)
        layer.backward(top, propagate_down, bottom)
        computed = [blob.cpu_diff().copy().ravel() for _, blob in to_check]

        for (label, blob), analytic in zip(to_check, computed, strict=True):
            for feat_id in range(blob.count):
                estimated = 0.0
                original = blob.cpu_data().reshape(-1)[feat_id]
                if not element_wise or feat_id == top_data_id:
                    objectives = []
                    step = np.float32(self.stepsize)
                    for shifted in (original + step, original - step):
                        # Written through mutable_cpu_data each time, so that GPU mode sees the change.
                        blob.mutable_cpu_data().reshape(-1)[feat_id] = shifted
                        runtime.set_random_seed(self.seed)
                        layer.forward(bottom, top)
                        objectives.append(_objective_and_gradient(top, top_id, top_data_id))
                    blob.mutable_cpu_data().reshape(-1)[feat_id] = original
                    estimated = (objectives[0] - objectives[1]) / self.stepsize / 2.0
                got = float(analytic[feat_id])
                feature = abs(float(original))
                if self.kink - self.kink_range > feature or feature > self.kink + self.kink_range:
                    scale = max(abs(got), abs(estimated), 1.0)
                    if abs(got - estimated) > self.threshold * scale:
                        raise GradientCheckError(
                            f"{layer.describe()}: gradient of {label} element {feat_id} "
                            f"(objective top {top_id}, element {top_data_id}) is {got:.6g}, finite "
                            f"differences give {estimated:.6g}; allowed error {self.threshold * scale:.3g}"
                        )


def _objective_and_gradient(top: Sequence[Blob], top_id: int, top_data_id: int) -> float:
    """Caffe's GetObjAndGradient: sets the top diffs and returns the objective."""
    if top_id < 0:
        loss = 0.0
        for blob in top:
            data = blob.cpu_data()
            loss += float(np.dot(data.ravel().astype(np.float64), data.ravel().astype(np.float64)))
            blob.mutable_cpu_diff()[...] = data
        return loss / 2.0
    for blob in top:
        blob.mutable_cpu_diff()[...] = 0
    loss_weight = 2.0
    top[top_id].mutable_cpu_diff().reshape(-1)[top_data_id] = loss_weight
    return float(top[top_id].cpu_data().reshape(-1)[top_data_id]) * loss_weight
