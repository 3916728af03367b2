"""Mish (ChenYingpeng/darknet2caffe, YOLOv4): y = x tanh(softplus(x)), softplus with threshold 20."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer

THRESHOLD = 20.0  # the fork's MISH_THRESHOLD: softplus(x) = x above it, exp(x) below its negative


def _expf(xp: ArrayModule, x: Array) -> Array:
    """C's expf on float x: exp in double, rounded to float32."""
    return xp.exp(x.astype(xp.float64)).astype(xp.float32)


def softplus(xp: ArrayModule, x: Array) -> Array:
    """The fork's softplus_activate in float: x above 20, expf(x) below -20, else logf(expf(x) + 1)."""
    e = _expf(xp, x)
    inner = xp.log((e + xp.float32(1)).astype(xp.float64)).astype(xp.float32)
    return xp.where(x > THRESHOLD, x, xp.where(x < -THRESHOLD, e, inner))


def mish(xp: ArrayModule, x: Array) -> Array:
    """x * (2 / (1 + expf(-2 sp)) - 1), sp = softplus(x): the fork's float forward."""
    sp = softplus(xp, x)
    tanh_sp = xp.float32(2) / (xp.float32(1) + _expf(xp, xp.float32(-2) * sp)) - xp.float32(1)
    return x * tanh_sp


def mish_slope(xp: ArrayModule, x: Array) -> Array:
    """dy/dx at x, in double: tanh(sp) + x (1 - tanh(sp)^2) sigmoid(x), sp = softplus(x)."""
    x64 = x.astype(xp.float64)
    e = xp.exp(xp.minimum(x64, THRESHOLD))
    sp = xp.where(x64 > THRESHOLD, x64, xp.log(1.0 + e))
    tanh_sp = xp.tanh(sp)
    # sigmoid(x) = 1 - exp(-softplus(x)), the fork's grad_sp, written without cancellation.
    sigmoid = xp.where(x64 > THRESHOLD, 1.0, e / (1.0 + e))
    return tanh_sp + x64 * (1.0 - tanh_sp * tanh_sp) * sigmoid


class MishLayer(NeuronLayer):
    """Mish, as Chen's Caffe layer computes it; in place allowed (YOLOv4's nets use it so)."""

    type = "Mish"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """No parameters (Chen's mish_param holds only an unused engine)."""
        self.saved_input: Array | None = None

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x tanh(softplus(x)); in-place use keeps x for backward when the net runs one."""
        x = bottom[0].data_on(side)
        if top[0] is bottom[0] and self.backward_needed:
            self.saved_input = x.copy()
        top[0].mutable_data_on(side)[...] = mish(side.xp, x)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy * mish'(x), at the input x (Chen's fork evaluates the formula at the output y)."""
        if not propagate_down[0]:
            return
        x = self.saved_input if top[0] is bottom[0] else bottom[0].data_on(side)
        assert x is not None  # an in-place forward saved the input: the net runs forward before backward
        dx = top[0].diff_on(side).astype(side.xp.float64) * mish_slope(side.xp, x)
        bottom[0].mutable_diff_on(side)[...] = dx
