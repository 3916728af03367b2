"""Hook implementations of caffe-layers-ocr: its parameter blocks, at the forks' LayerParameter numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# --- Lstm: caffe_ocr's 8266711 is caffe-layers-rcnn's roi_pooling_param (caffe-fast-rcnn's), CTPN's 140 is
# BVLC's elu_param; this pack's own number. A fork-written .caffemodel's block is not read (its blobs are).
LSTM_NUMBER = 1400
# --- DenseBlock: caffe_ocr's (and Tongcheng/caffe's) 147 is BVLC's swish_param; this pack's own number.
DENSE_BLOCK_NUMBER = 1470


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The forks' parameter blocks this pack reads."""
    from caffe_layers_ocr.params import DenseBlockParameter, LSTMParameter

    return {
        # Lstm
        "lstm_param": ParamBlock(LSTMParameter, LSTM_NUMBER),
        # DenseBlock
        "denseblock_param": ParamBlock(DenseBlockParameter, DENSE_BLOCK_NUMBER),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters for Lstm (one ONNX LSTM) and DenseBlock (TEST: its BatchNormalization, Relu, Conv chain)."""
    from caffe_layers_ocr.onnx_export import dense_block, lstm

    return {
        # Lstm
        **lstm.CONVERTERS,
        # DenseBlock
        **dense_block.CONVERTERS,
    }
