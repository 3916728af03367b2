"""Hook implementations of caffe-layers-ocr: its parameter blocks, at the forks' LayerParameter numbers,
and its ONNX converters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# --- Transpose: senlinuc/caffe_ocr's transpose_param = 8266710. ---
TRANSPOSE_NUMBER = 8266710
# --- Reverse: senlinuc/caffe_ocr's reverse_param = 160. jolibrain/caffe declares the same message at 209; a
# jolibrain .caffemodel's block at 209 is an unknown field here (Reverse has no blobs, so nothing is lost:
# the prototxt names the block as text).
REVERSE_NUMBER = 160
# --- CTCGreedyDecoder: senlinuc/caffe_ocr's ctc_decoder_param is 158, which caffe-layers-rcnn already gives
# to cascade-rcnn's box_group_output_param (and jolibrain to continuation_indicator_param); this pack's
# number is 10158. The decoder has no blobs and caffe_ocr's nets leave the block out, so only a binary
# LayerParameter written by the fork with a non-default block differs.
CTC_DECODER_NUMBER = 10158
# --- WarpCTCLoss: senlinuc/caffe_ocr's ctc_loss_param = 159 (message CTCLossParameter), declared here under
# the name warp_ctc_loss_param: jolibrain's CtcLoss (below) owns the name ctc_loss_param with another message.
# The number is the fork's, so binary files read the same; a caffe_ocr prototxt that writes
# `ctc_loss_param { blank_index: ... }` for WarpCTCLoss must say warp_ctc_loss_param (none of the fork's own
# nets writes the block).
WARP_CTC_LOSS_NUMBER = 159
# --- CtcLoss: jolibrain/caffe's ctc_loss_param = 157 (as deepdetect's CRNN templates write it). ---
CTC_LOSS_NUMBER = 157
# --- ContinuationIndicator: jolibrain/caffe's continuation_indicator_param is 158 (taken by
# caffe-layers-rcnn, see above); this pack's number is 20158. The layer has no blobs.
CONTINUATION_INDICATOR_NUMBER = 20158
# --- LabelsequenceAccuracy: jolibrain/caffe's labelsequence_accuracy_param is 159, caffe_ocr's ctc_loss_param
# number (warp_ctc_loss_param above); this pack's number is 20159. The layer has no blobs.
LABELSEQUENCE_ACCURACY_NUMBER = 20159
# --- Lstm: caffe_ocr's 8266711 is caffe-layers-rcnn's roi_pooling_param (caffe-fast-rcnn's), CTPN's 140 is
# BVLC's elu_param; this pack's own number. A fork-written .caffemodel's block is not read (its blobs are).
LSTM_NUMBER = 1400
# --- DenseBlock: caffe_ocr's (and Tongcheng/caffe's) 147 is BVLC's swish_param; this pack's own number.
DENSE_BLOCK_NUMBER = 1470


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The forks' parameter blocks this pack reads."""
    from caffe_layers_ocr.params import (
        ContinuationIndicatorParameter,
        CTCDecoderParameter,
        CtcLossParameter,
        DenseBlockParameter,
        LabelsequenceAccuracyParameter,
        LSTMParameter,
        ReverseParameter,
        TransposeParameter,
        WarpCTCLossParameter,
    )

    return {
        # Transpose (caffe_ocr)
        "transpose_param": ParamBlock(TransposeParameter, TRANSPOSE_NUMBER),
        # Reverse (caffe_ocr, jolibrain)
        "reverse_param": ParamBlock(ReverseParameter, REVERSE_NUMBER),
        # CTCGreedyDecoder (caffe_ocr)
        "ctc_decoder_param": ParamBlock(CTCDecoderParameter, CTC_DECODER_NUMBER),
        # WarpCTCLoss (caffe_ocr)
        "warp_ctc_loss_param": ParamBlock(WarpCTCLossParameter, WARP_CTC_LOSS_NUMBER),
        # CtcLoss (jolibrain)
        "ctc_loss_param": ParamBlock(CtcLossParameter, CTC_LOSS_NUMBER),
        # ContinuationIndicator (jolibrain)
        "continuation_indicator_param": ParamBlock(ContinuationIndicatorParameter,
                                                   CONTINUATION_INDICATOR_NUMBER),
        # LabelsequenceAccuracy (jolibrain)
        "labelsequence_accuracy_param": ParamBlock(LabelsequenceAccuracyParameter,
                                                   LABELSEQUENCE_ACCURACY_NUMBER),
        # Lstm
        "lstm_param": ParamBlock(LSTMParameter, LSTM_NUMBER),
        # DenseBlock
        "denseblock_param": ParamBlock(DenseBlockParameter, DENSE_BLOCK_NUMBER),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Transpose, Reverse, ContinuationIndicator, Lstm (one ONNX LSTM) and DenseBlock (TEST) convert; the CTC
    decoder and losses refuse, saying why."""
    from caffe_layers_ocr.onnx_export import ctc, dense_block, lstm, sequence

    return {**sequence.CONVERTERS, **ctc.CONVERTERS, **lstm.CONVERTERS, **dense_block.CONVERTERS}
