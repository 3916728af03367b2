"""Transpose (senlinuc/caffe_ocr): permutes a blob's axes, top axis i = bottom axis dim[i]."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class TransposeLayer(Layer):
    """top = bottom with its axes permuted by transpose_param.dim; backward permutes back."""

    type = "Transpose"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dim; refuses in-place use, as the fork's CHECK does."""
        if top[0] is bottom[0]:
            raise self.error("does not support in-place computation (give the top a different name from "
                             "the bottom)")
        self.dims = [int(d) for d in get_param_block(self.layer_param, "transpose_param").dim]

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: bottom shape permuted; dim must list each of the bottom's axes once."""
        shape = bottom[0].shape
        if len(self.dims) != len(shape):
            raise self.error(f"transpose_param has {len(self.dims)} dim values but bottom "
                             f"'{self.layer_param.bottom[0]}' has {len(shape)} axes (shape {shape}); "
                             "give one dim per axis")
        if sorted(self.dims) != list(range(len(shape))):
            raise self.error(f"transpose_param.dim {self.dims} is not a permutation of the bottom's axes "
                             f"0..{len(shape) - 1}")
        top[0].reshape([shape[d] for d in self.dims])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top = bottom.transpose(dim)."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side).transpose(self.dims)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom.diff = top.diff with the inverse permutation."""
        if not propagate_down[0]:
            return
        inverse = [self.dims.index(axis) for axis in range(len(self.dims))]
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side).transpose(inverse)
