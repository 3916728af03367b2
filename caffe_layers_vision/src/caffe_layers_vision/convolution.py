"""Caffe's Convolution layer: N spatial axes, groups, dilation, one batched GEMM per call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.base_convolution import BaseConvolutionLayer
from caffe_layers_vision.workspace import Workspace, shared_scratch


class ConvolutionLayer(BaseConvolutionLayer):
    """Convolves each bottom with learned filters (weights (num_output, C/group, *kernel)) plus a bias."""

    type = "Convolution"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Sets up the shared convolution state and the cache of forward columns."""
        super().layer_setup(bottom, top)
        self.forward_columns: dict[int, Any] = {}

    def compute_output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        """(in + 2 pad - dilated kernel) / stride + 1, rounded down."""
        return self.params.conv_output_shape(input_shape)

    def _bottom_columns(self, side: Side, source: Blob, index: int, work: Workspace) -> Any:
        return self.columns(side.xp, self.conv_input(source.data_on(side)), f"cols{index}", work)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """im2col of each bottom times the weights, plus the bias; TRAIN keeps the columns for backward."""
        bias = self.blobs[1].data_on(side) if self.bias_term else None
        # A TEST net rarely runs backward: its columns go to the shared scratch (and are rebuilt if needed),
        # so inference holds one column buffer for the whole net instead of one per layer.
        keep = self.phase == caffe_pb2.TRAIN
        self.forward_columns = {}
        for index, (source, target) in enumerate(zip(bottom, top, strict=True)):
            cols = self._bottom_columns(side, source, index, self.workspace if keep else shared_scratch())
            if keep:
                self.forward_columns[index] = cols
            self.forward_gemm(side, cols, self.conv_output(target.mutable_data_on(side)), bias)

    def weight_and_bottom_gradients(self, side: Side, index: int, source: Blob, top_diff: Any,
                                    to_bottom: bool) -> None:
        """The weight gradient from kept (or rebuilt) forward columns; the bottom's by col2im."""
        diff_last = self.batch_last(side.xp, self.conv_output(top_diff), "top_diff_last")
        if self.param_propagate_down(0):
            cols = self.forward_columns.get(index)
            if cols is None:
                cols = self._bottom_columns(side, source, index, shared_scratch())
            self.weight_gemm(side, cols, diff_last)
        if to_bottom:
            cols_diff = self.backward_gemm(side, diff_last)
            self.col2im(side, cols_diff, self.conv_input(source.mutable_diff_on(side)))
