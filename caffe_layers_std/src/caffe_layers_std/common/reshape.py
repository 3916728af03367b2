"""Reshape: a new shape over the same data and diff (0 copies a bottom dim, one -1 is inferred)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class ReshapeLayer(Layer):
    """Gives the bottom's memory a new shape, replacing axes [axis, axis + num_axes) by `shape`."""

    type = "Reshape"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Finds the copied (0) axes, the inferred (-1) axis and the product of the explicit dims."""
        dims = list(self.layer_param.reshape_param.shape.dim)
        self.new_dims = dims
        self.copy_axes = [i for i, d in enumerate(dims) if d == 0]
        inferred = [i for i, d in enumerate(dims) if d == -1]
        if len(inferred) > 1:
            raise self.error(f"reshape_param.shape {dims} contains {len(inferred)} -1 dims; "
                             "at most a single -1 may be given")
        bad = [d for d in dims if d < -1]
        if bad:
            raise self.error(f"reshape_param.shape {dims} has dims below -1; expected positive sizes, "
                             "0 (copy) or -1 (infer)")
        self.inferred_axis = inferred[0] if inferred else -1
        self.constant_count = math.prod(d for d in dims if d > 0)

    def _axis_range(self, bottom: Blob) -> tuple[int, int]:
        param = self.layer_param.reshape_param
        n = bottom.num_axes
        start = param.axis if param.axis >= 0 else n + param.axis + 1
        if not 0 <= start <= n:
            raise self.error(f"reshape_param.axis {param.axis} is out of range for a {n}-D bottom "
                             f"of shape {bottom.shape}")
        if param.num_axes < -1:
            raise self.error(f"reshape_param.num_axes must be >= 0, or -1 for all; got {param.num_axes}")
        end = n if param.num_axes == -1 else start + param.num_axes
        if end > n:
            raise self.error(f"reshape_param axis {param.axis} + num_axes {param.num_axes} reaches past "
                             f"the {n} axes of the bottom shape {bottom.shape}")
        return start, end

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Computes the top shape and shares the bottom's data and diff."""
        src = bottom[0]
        start, end = self._axis_range(src)
        shape = list(src.shape[:start]) + list(self.new_dims) + list(src.shape[end:])
        for axis in self.copy_axes:
            if start + axis >= src.num_axes:
                raise self.error(f"reshape_param.shape has a 0 at position {axis} but the bottom of shape "
                                 f"{src.shape} has no axis {start + axis} to copy")
            shape[start + axis] = src.shape[start + axis]
        if self.inferred_axis >= 0:
            explicit = self.constant_count * src.count_between(0, start) * src.count_between(end)
            for axis in self.copy_axes:
                explicit *= shape[start + axis]
            if explicit == 0 or src.count % explicit:
                raise self.error(f"bottom count ({src.count}, shape {src.shape}) must be divisible by the "
                                 f"product of the specified dimensions ({explicit})")
            shape[start + self.inferred_axis] = src.count // explicit
        count = math.prod(shape)
        if count != src.count:
            raise self.error(f"output count must match input count: shape {tuple(shape)} holds {count} "
                             f"values, the bottom {src.shape} holds {src.count}")
        top[0].reshape(shape)
        top[0].share_data(src)
        top[0].share_diff(src)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Nothing to compute: the top shares the bottom's data."""

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Nothing to compute: the top shares the bottom's diff."""
