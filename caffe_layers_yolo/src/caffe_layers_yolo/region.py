"""Region (darknet's [region] at inference, as darknet2caffe converters write it): x, y and objectness
through the logistic, class scores through a softmax (or the logistic), w and h unchanged; top shaped as
the bottom."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


def _logistic(xp: ArrayModule, x: Array) -> Array:
    """darknet's logistic_activate: 1 / (1 + exp(-x)) in double, stored as float."""
    return (1.0 / (1.0 + xp.exp(-x.astype(xp.float64)))).astype(xp.float32)


def _softmax(xp: ArrayModule, x: Array, axis: int) -> Array:
    """darknet's softmax along an axis: exp(x - max) in double, as float, summed and divided in float."""
    shifted = (x - x.max(axis=axis, keepdims=True)).astype(xp.float64)
    e = xp.exp(shifted).astype(xp.float32)
    return e / e.sum(axis=axis, keepdims=True, dtype=xp.float32)


class RegionLayer(Layer):
    """darknet's YOLOv2 region layer: the head's values activated in place of darknet's own decoder."""

    type = "Region"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads classes, num and coords; the anchors serve darknet's decoder, which this layer leaves out."""
        param = get_param_block(self.layer_param, "region_param")
        self.classes, self.num, self.coords = param.classes, param.num, param.coords
        self.softmax = param.softmax
        if self.num < 1:
            raise self.error("region_param.num (anchors per cell) must be at least 1")
        if self.coords < 2:
            raise self.error(f"region_param.coords must be at least 2 (x and y), got {self.coords}")
        anchors = [a for a in param.anchors.replace(" ", "").split(",") if a]
        if anchors and len(anchors) != 2 * self.num:
            raise self.error(f"region_param.anchors has {len(anchors)} values; num {self.num} needs "
                             f"{2 * self.num} (a width and a height per anchor)")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shaped as the bottom, whose channels must be num * (coords + 1 + classes)."""
        entries = self.coords + 1 + self.classes
        if bottom[0].shape[1] != self.num * entries:
            raise self.error(f"bottom '{self.layer_param.bottom[0]}' has {bottom[0].shape[1]} channels; "
                             f"num {self.num} x (coords {self.coords} + 1 + classes {self.classes}) = "
                             f"{self.num * entries} expected")
        top[0].reshape_like(bottom[0])

    def _anchor_view(self, blob_values: Array) -> Array:
        """(N, num, coords + 1 + classes, H * W): one anchor's entries along axis 2."""
        num, _, height, width = blob_values.shape
        return blob_values.reshape(num, self.num, self.coords + 1 + self.classes, height * width)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """x, y, objectness: logistic; classes: softmax over each anchor's (or logistic); w, h: as given."""
        xp = side.xp
        x = self._anchor_view(bottom[0].data_on(side))
        y = self._anchor_view(top[0].mutable_data_on(side))
        c = self.coords
        y[:, :, 2:c] = x[:, :, 2:c]
        y[:, :, :2] = _logistic(xp, x[:, :, :2])
        y[:, :, c] = _logistic(xp, x[:, :, c])
        classes = x[:, :, c + 1:]
        y[:, :, c + 1:] = _softmax(xp, classes, 2) if self.softmax else _logistic(xp, classes)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The derivative of that map: y(1 - y) for logistic entries, the softmax Jacobian, 1 for w and h."""
        if not propagate_down[0]:
            return
        y = self._anchor_view(top[0].data_on(side))
        dy = self._anchor_view(top[0].diff_on(side))
        dx = self._anchor_view(bottom[0].mutable_diff_on(side))
        c = self.coords
        logistic = [slice(0, 2), slice(c, c + 1)] + ([] if self.softmax else [slice(c + 1, None)])
        dx[:, :, 2:c] = dy[:, :, 2:c]
        for entries in logistic:
            dx[:, :, entries] = dy[:, :, entries] * y[:, :, entries] * (1 - y[:, :, entries])
        if self.softmax:
            p, dp = y[:, :, c + 1:], dy[:, :, c + 1:]
            dx[:, :, c + 1:] = p * (dp - (p * dp).sum(axis=2, keepdims=True))
