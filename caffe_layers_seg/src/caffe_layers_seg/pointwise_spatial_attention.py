"""PointwiseSpatialAttention of PSANet (hszhao/PSANet): each position's feature is aggregated from every other
position with a weight read from a per-position attention mask, in COLLECT or DISTRIBUTE mode."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg.params import PointwiseSpatialAttentionParameter
from caffe_layers_std.common.softmax import softmax, softmax_backward

BLOCK = "pointwise_spatial_attention_param"


def buffer_index(height: int, width: int, mask_height: int, mask_width: int, collect: bool) -> np.ndarray:
    """For each entry of the (HW, HW) attention buffer, the flat index into the mask blob's (K + 1, HW) planes
    (K = mask_height * mask_width, plane K being an all-zero plane for entries no mask value reaches).

    Position p = (h, w) with mask offset (hidx, widx) reaches q = (h + hidx - half_h, w + widx - half_w);
    COLLECT writes mask[hidx * mask_width + widx, p] to buffer[q, p], DISTRIBUTE to buffer[p, q]."""
    planes = mask_height * mask_width
    size = height * width
    rows, cols = np.divmod(np.arange(size), width)
    hidx = rows[None, :] - rows[:, None] + (mask_height - 1) // 2
    widx = cols[None, :] - cols[:, None] + (mask_width - 1) // 2
    inside = (hidx >= 0) & (hidx < mask_height) & (widx >= 0) & (widx < mask_width)
    plane = np.where(inside, hidx * mask_width + widx, planes)
    index = plane * size + np.arange(size)[:, None]
    return np.ascontiguousarray(index.T if collect else index)


def mask_index(index: np.ndarray, planes: int) -> np.ndarray:
    """The inverse of `buffer_index` over the mask's K planes: for each mask entry, the flat buffer position
    it is written to, or HW * HW (one past the buffer) for entries that fall outside the feature map."""
    size = index.shape[0]
    inverse = np.full((planes + 1) * size, size * size, dtype=np.intp)
    inverse[index.ravel()] = np.arange(size * size)
    return inverse[: planes * size]


class PointwiseSpatialAttentionLayer(Layer):
    """top[n] = bottom0[n] (C x HW) @ A[n] (HW x HW) / normalization_factor, A built from bottom1's masks.

    bottom1 has mask_height * mask_width channels: at each position p, a mask centred on p. COLLECT sets
    A[q, p] (what p collects from q), DISTRIBUTE A[p, q] (what p distributes to q); entries the masks do not
    reach are 0. With is_softmax, A is normalised by Caffe's Softmax along softmax_param.axis of the
    (N, HW, H, W) buffer, those zero entries included, as PSANet's internal Softmax layer does."""

    type = "PointwiseSpatialAttention"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4, 1: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the mask size (both set, odd and above 1, or both unset: 2 H - 1 by 2 W - 1 of bottom0 at
        setup), the normalization factor (default: the mask's size), is_softmax and psa_type."""
        param = get_param_block(self.layer_param, BLOCK)
        has_height = param.HasField("attention_mask_height")
        if has_height != param.HasField("attention_mask_width"):
            raise self.error(f"{BLOCK}.attention_mask_height and attention_mask_width must both be set or "
                             f"both be unset")
        if has_height:
            self.mask_size = (param.attention_mask_height, param.attention_mask_width)
            for name, size in zip(("height", "width"), self.mask_size, strict=True):
                if size <= 1 or size % 2 == 0:
                    raise self.error(f"{BLOCK}.attention_mask_{name} must be an odd number above 1, "
                                     f"got {size}")
        else:
            self.mask_size = (2 * bottom[0].height - 1, 2 * bottom[0].width - 1)
        self.check_mask_channels(bottom[1])
        factor = np.float32(param.normalization_factor if param.HasField("normalization_factor")
                            else self.mask_size[0] * self.mask_size[1])
        if factor == 0:
            raise self.error(f"{BLOCK}.normalization_factor must not be 0")
        # Dtype(1.0 / normalization_factor_): the reciprocal in double, rounded to float.
        self.scale = np.float32(1.0 / float(factor))
        self.is_softmax = param.is_softmax
        self.collect = param.psa_type == PointwiseSpatialAttentionParameter.COLLECT
        self.softmax_axis = self.layer_param.softmax_param.axis
        if self.is_softmax and not -4 <= self.softmax_axis < 4:
            raise self.error(f"softmax_param.axis {self.softmax_axis} is out of range for the (N, HW, H, W) "
                             f"attention buffer")
        self.geometry = (0, 0)
        self.host_index = np.zeros((0, 0), dtype=np.intp)
        self.host_inverse: np.ndarray | None = None
        self.device_index: dict[str, Array] = {}
        self.attention: Array | None = None

    def check_mask_channels(self, mask: Blob) -> None:
        """bottom1 must have one channel per mask entry, row-major."""
        planes = self.mask_size[0] * self.mask_size[1]
        if mask.channels != planes:
            raise self.error(f"bottom[1] has {mask.channels} channels; expected attention_mask_height * "
                             f"attention_mask_width = {self.mask_size[0]} * {self.mask_size[1]} = {planes}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top takes bottom0's shape; bottom1 must match its num, height and width."""
        for axis, name in ((0, "num"), (2, "height"), (3, "width")):
            if bottom[0].shape[axis] != bottom[1].shape[axis]:
                raise self.error(f"bottom[0] and bottom[1] must have the same {name}, got shapes "
                                 f"{bottom[0].shape} and {bottom[1].shape}")
        self.check_mask_channels(bottom[1])
        top[0].reshape_like(bottom[0])
        geometry = (bottom[0].height, bottom[0].width)
        if geometry != self.geometry:
            self.geometry = geometry
            self.host_index = buffer_index(*geometry, *self.mask_size, self.collect)
            self.host_inverse = None
            self.device_index = {}

    def index_on(self, side: Side, inverse: bool) -> Array:
        """The buffer index (or its inverse) on this side, built once per geometry."""
        key = f"{side.name}-{inverse}"
        if key not in self.device_index:
            if inverse and self.host_inverse is None:
                self.host_inverse = mask_index(self.host_index, self.mask_size[0] * self.mask_size[1])
            self.device_index[key] = side.xp.asarray(self.host_inverse if inverse else self.host_index)
        return self.device_index[key]

    def softmax_split(self, num: int, size: int) -> tuple[int, int, int]:
        """The (outer, channels, inner) split of the (N, HW, H, W) buffer at softmax_param.axis."""
        shape = (num, size, *self.geometry)
        axis = self.softmax_axis % 4
        return (int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:])))

    def attention_on(self, side: Side, mask: Blob) -> Array:
        """The (N, HW, HW) attention buffer, softmax-normalised when is_softmax."""
        xp = side.xp
        num, size = mask.num, self.geometry[0] * self.geometry[1]
        planes = mask.data_on(side).reshape(num, -1)
        padded = xp.concatenate((planes, xp.zeros((num, size), dtype=planes.dtype)), axis=1)
        buffer = xp.take(padded, self.index_on(side, inverse=False), axis=1)
        if self.is_softmax:
            split = self.softmax_split(num, size)
            buffer = softmax(xp, buffer.reshape(split))
        return buffer.reshape(num, size, size)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top[n] = scale * bottom0[n] @ A[n]."""
        num, channels = bottom[0].num, bottom[0].channels
        attention = self.attention_on(side, bottom[1])
        x = bottom[0].data_on(side).reshape(num, channels, -1)
        out = top[0].mutable_data_on(side).reshape(num, channels, -1)
        out[...] = side.xp.matmul(x, attention)
        out *= self.scale
        self.attention = attention if self.backward_needed else None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """d bottom0[n] = scale * dy[n] @ A[n]^T; dA[n] = scale * bottom0[n]^T @ dy[n], through the softmax
        when is_softmax, gathered back to bottom1's mask entries (0 for entries outside the map)."""
        xp = side.xp
        num, channels = bottom[0].num, bottom[0].channels
        attention = self.attention if self.attention is not None else self.attention_on(side, bottom[1])
        dy = top[0].diff_on(side).reshape(num, channels, -1)
        if propagate_down[0]:
            dx = bottom[0].mutable_diff_on(side).reshape(num, channels, -1)
            dx[...] = xp.matmul(dy, attention.transpose(0, 2, 1))
            dx *= self.scale
        if propagate_down[1]:
            x = bottom[0].data_on(side).reshape(num, channels, -1)
            d_attention = xp.matmul(x.transpose(0, 2, 1), dy)
            d_attention *= self.scale
            if self.is_softmax:
                split = self.softmax_split(num, attention.shape[1])
                d_attention = softmax_backward(attention.reshape(split), d_attention.reshape(split))
            flat = d_attention.reshape(num, -1)
            padded = xp.concatenate((flat, xp.zeros((num, 1), dtype=flat.dtype)), axis=1)
            dmask = bottom[1].mutable_diff_on(side).reshape(num, -1)
            dmask[...] = xp.take(padded, self.index_on(side, inverse=True), axis=1)
