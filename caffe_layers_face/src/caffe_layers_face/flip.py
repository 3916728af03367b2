"""Flip: happynear's mirror layer (NormFace, AM-Softmax): reverses the width and/or height of a blob."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class FlipLayer(Layer):
    """y[n, c, h, w] = x[n, c, H-1-h if flip_height, W-1-w if flip_width] on the legacy (N, C, H, W) view."""

    type = "Flip"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    # The fork reads num/channels/height/width (Caffe's legacy accessors: at most 4 axes, missing ones 1).
    bottom_num_axes = {0: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads flip_param (flip_width defaults to true, flip_height to false)."""
        param = get_param_block(self.layer_param, "flip_param")
        self.flip_width = bool(param.flip_width)
        self.flip_height = bool(param.flip_height)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shaped like the bottom."""
        if top[0] is bottom[0]:
            raise self.error("cannot run in place: the fork's flip reads the bottom while writing the top")
        top[0].reshape_like(bottom[0])

    def _flipped(self, blob: Blob, array: Array) -> Array:
        view = array.reshape(blob.num, blob.channels, blob.height, blob.width)
        return view[:, :, ::-1 if self.flip_height else 1, ::-1 if self.flip_width else 1]

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the bottom, mirrored."""
        out = top[0].mutable_data_on(side).reshape(top[0].num, top[0].channels, top[0].height, top[0].width)
        out[...] = self._flipped(bottom[0], bottom[0].data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The flip is its own inverse: the bottom diff is the top diff, mirrored."""
        if not propagate_down[0]:
            return
        out = bottom[0].mutable_diff_on(side).reshape(bottom[0].num, bottom[0].channels, bottom[0].height,
                                                      bottom[0].width)
        out[...] = self._flipped(top[0], top[0].diff_on(side))
