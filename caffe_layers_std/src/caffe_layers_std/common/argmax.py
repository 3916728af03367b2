"""ArgMax: indices (and optionally values) of the top_k largest entries; ties go to the larger index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_layers_std.axes import canonical_axis, split_at


class ArgMaxLayer(Layer):
    """Top-k indices per instance (or along `axis`); `out_max_val` adds or returns the values."""

    type = "ArgMax"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads top_k, out_max_val and axis and checks top_k against the bottom."""
        param = self.layer_param.argmax_param
        self.out_max_val = param.out_max_val
        self.top_k = param.top_k
        self.has_axis = param.HasField("axis")
        if self.top_k < 1:
            raise self.error(f"argmax_param.top_k must not be less than 1, got {self.top_k}")
        if self.has_axis:
            self.axis = canonical_axis(self, bottom[0], param.axis, "argmax_param.axis")
            if self.top_k > bottom[0].shape[self.axis]:
                raise self.error(f"argmax_param.top_k ({self.top_k}) must be less than or equal to the "
                                 f"dimension of axis {self.axis} ({bottom[0].shape[self.axis]})")
        elif self.top_k > bottom[0].count_between(1):
            raise self.error(f"argmax_param.top_k ({self.top_k}) must be less than or equal to the size "
                             f"of the flattened bottom per instance ({bottom[0].count_between(1)})")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """(N, 1 or 2, top_k[, 1...]) without an axis; else the bottom's shape with the axis set to top_k."""
        if self.has_axis:
            shape = list(bottom[0].shape)
            shape[self.axis] = self.top_k
        else:
            shape = [1] * max(bottom[0].num_axes, 3)
            shape[0] = bottom[0].shape[0]
            shape[1] = 2 if self.out_max_val else 1
            shape[2] = self.top_k
        top[0].reshape(shape)

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Sorts by (value, index) descending and keeps the first top_k."""
        x = bottom[0].cpu_data()
        if self.has_axis:
            split = split_at(bottom[0], self.axis)
        else:
            split = (x.shape[0], bottom[0].count_between(1), 1)
        values = x.reshape(split)
        dim = split[1]
        # Sorting the reversed axis stably by descending value puts the larger index first among ties.
        order = np.argsort(-values[:, ::-1, :], axis=1, kind="stable")[:, : self.top_k, :]
        indices = dim - 1 - order
        best = np.take_along_axis(values, indices, axis=1)
        out = top[0].mutable_cpu_data()
        if self.has_axis:
            out.reshape(split[0], self.top_k, split[2])[...] = best if self.out_max_val else indices
        elif self.out_max_val:
            pair = out.reshape(split[0], 2, self.top_k)
            pair[:, 0, :] = indices[:, :, 0]
            pair[:, 1, :] = best[:, :, 0]
        else:
            out.reshape(split[0], self.top_k)[...] = indices[:, :, 0]

    def backward_cpu(self, top: Sequence[Blob], propagate_down: Sequence[bool],
                     bottom: Sequence[Blob]) -> None:
        """ArgMax has no gradient; asking for one (e.g. by force_backward) is refused."""
        if any(propagate_down):
            raise self.error("cannot back-propagate (it has no gradient); remove force_backward or set "
                             "propagate_down: false for its bottom")
