"""Reorg (eric612/MobileNet-YOLO; darknet's reorg, YOLOv2's passthrough) with its index map, forward and
reverse, and the true inverse permutation as backward (the fork's backward writes zeros)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


def gather_to_depth(x: Array, shape: Sequence[int], stride: int) -> Array:
    """Darknet's reorg with forward = 0 on a bottom of `shape` (N, C, H, W): its buffer read as
    (N, C / s^2, H s, W s) = X gives Y[n, (dy s + dx) C / s^2 + c, j, i] = X[n, c, j s + dy, i s + dx]."""
    n, c, h, w = shape
    s = stride
    blocks = x.reshape(n, c // (s * s), h, s, w, s)
    return blocks.transpose(0, 3, 5, 1, 2, 4).reshape(n, c, h, w)


def scatter_from_depth(y: Array, shape: Sequence[int], stride: int) -> Array:
    """The inverse of `gather_to_depth` (darknet's reorg with forward = 1), on a buffer of `shape`'s size:
    the result, read as (N, C / s^2, H s, W s), has
    X[n, c, j s + dy, i s + dx] = Y[n, (dy s + dx) C / s^2 + c, j, i]."""
    n, c, h, w = shape
    s = stride
    parts = y.reshape(n, s, s, c // (s * s), h, w)
    return parts.transpose(0, 3, 4, 1, 5, 2).reshape(n, c // (s * s), h * s, w * s)


class ReorgLayer(Layer):
    """Darknet's reorg: (N, C, H, W) -> (N, C s^2, H / s, W / s), or the inverse map with `reverse: true`."""

    type = "Reorg"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads reorg_param; refuses in-place use, as the fork does."""
        param = get_param_block(self.layer_param, "reorg_param")
        if not param.HasField("stride"):
            raise self.error("reorg_param.stride must be given (the fork CHECKs it)")
        if param.stride < 1:
            raise self.error(f"reorg_param.stride must be positive, got {param.stride}")
        if top[0] is bottom[0]:
            raise self.error("Reorg cannot run in place (top and bottom are one blob)")
        self.stride = int(param.stride)
        self.reverse = bool(param.reverse)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (N, C s^2, H / s, W / s), or (N, C / s^2, H s, W s) with reverse; C must divide by s^2."""
        n, c, h, w = bottom[0].shape
        s = self.stride
        if c % (s * s):
            raise self.error(f"the bottom's channels ({c}, shape {list(bottom[0].shape)}) must be a multiple "
                             f"of reorg_param.stride^2 = {s * s}: darknet's index map needs C / stride^2 "
                             "planes")
        if self.reverse:
            top[0].reshape((n, c // (s * s), h * s, w * s))
            return
        if h % s or w % s:
            raise self.error(f"the bottom's height and width ({h} x {w}) must be multiples of "
                             f"reorg_param.stride ({s})")
        top[0].reshape((n, c * s * s, h // s, w // s))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The fork's reorg_cpu with forward = reverse, on the bottom's dimensions."""
        move = scatter_from_depth if self.reverse else gather_to_depth
        out = move(bottom[0].data_on(side), bottom[0].shape, self.stride)
        top[0].mutable_data_on(side)[...] = out.reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Bottom diff: the top diff moved back through the inverse permutation (the fork's is all zeros)."""
        if not propagate_down[0]:
            return
        move = gather_to_depth if self.reverse else scatter_from_depth
        back = move(top[0].diff_on(side), bottom[0].shape, self.stride)
        bottom[0].mutable_diff_on(side)[...] = back.reshape(bottom[0].shape)
