"""Permute: reorders the axes of a blob (SSD's NCHW -> NHWC before flattening the heads)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class PermuteLayer(Layer):
    """Top axis i is bottom axis order[i]; axes not named keep their relative order after the named ones."""

    type = "Permute"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Completes permute_param.order with the axes it leaves out, refusing repeated or too large axes."""
        num_axes = bottom[0].num_axes
        order: list[int] = []
        for axis in get_param_block(self.layer_param, "permute_param").order:
            if axis >= num_axes:
                raise self.error(f"permute_param.order {axis} should be less than the input dimension "
                                 f"{num_axes} (bottom shape {list(bottom[0].shape)})")
            if axis in order:
                raise self.error(f"permute_param.order has duplicate orders ({axis} given twice)")
            order.append(axis)
        self.order = tuple(order + [axis for axis in range(num_axes) if axis not in order])
        self.need_permute = self.order != tuple(range(num_axes))

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's dimensions in the permuted order; the identity order shares its data."""
        if bottom[0].num_axes != len(self.order):
            raise self.error(f"bottom has {bottom[0].num_axes} axes; the layer was set up for "
                             f"{len(self.order)}")
        top[0].reshape(tuple(bottom[0].shape[axis] for axis in self.order))
        # Caffe shares in Forward; sharing here, as Flatten does, lets a memory planner see the alias.
        if not self.need_permute:
            top[0].share_data(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the transposed bottom (nothing to do for the identity order, whose top shares it)."""
        if not self.need_permute:
            return
        top[0].mutable_data_on(side)[...] = side.xp.transpose(bottom[0].data_on(side), self.order)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The top diff transposed back; with the identity order the bottom shares the top's diff."""
        if not propagate_down[0]:
            return
        if not self.need_permute:
            bottom[0].share_diff(top[0])
            return
        inverse = tuple(self.order.index(axis) for axis in range(len(self.order)))
        bottom[0].mutable_diff_on(side)[...] = side.xp.transpose(top[0].diff_on(side), inverse)
