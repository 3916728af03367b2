"""The pack's parameter messages, field for field those of the OCR forks' caffe.proto files.

Forks: senlinuc/caffe_ocr at 81642f61ea8f888e360cca30e08e05b7bc6d4556 (src/caffe/proto/caffe.proto),
tianzhi0549/CTPN at f77ec9e7 (its Lstm's message) and jolibrain/caffe at
23928c02fcf19f16ce46e74a96034f6f81b59f1c (master, src/caffe/proto/caffe.proto). The LayerParameter
numbers each block takes (and where they depart from the fork's) are in plugin.py.
"""

from caffe_core.messages import Field, Message, build_messages
from caffe_core.proto import caffe_pb2

# --- Transpose (senlinuc/caffe_ocr TransposeParameter) ---
TRANSPOSE = Message("TransposeParameter", [
    Field("dim", "int32", 1, repeated=True),
])

# --- Reverse (senlinuc/caffe_ocr ReverseParameter; jolibrain/caffe's is the same message) ---
REVERSE = Message("ReverseParameter", [
    Field("axis", "int32", 1, default=0),
])

# --- CTCGreedyDecoder (senlinuc/caffe_ocr CTCDecoderParameter) ---
CTC_DECODER = Message("CTCDecoderParameter", [
    Field("blank_index", "int32", 1, default=0),
    Field("ctc_merge_repeated", "bool", 2, default=True),
])

# --- WarpCTCLoss (senlinuc/caffe_ocr CTCLossParameter, renamed here: jolibrain's CtcLoss owns the block name
# ctc_loss_param). WarpCTCLoss reads blank_index only, as the fork does; the other fields are declared so
# that the fork's files parse.
WARP_CTC_LOSS = Message("WarpCTCLossParameter", [
    Field("output_delay", "int32", 1, default=0),
    Field("blank_index", "int32", 2, default=0),
    Field("preprocess_collapse_repeated", "bool", 3, default=False),
    Field("ctc_merge_repeated", "bool", 4, default=True),
    Field("loss_calculation_t", "int32", 5, default=0),
])

# --- CtcLoss (jolibrain/caffe CtcLossParameter; field 2 is unused in the fork's schema) ---
CTC_LOSS = Message("CtcLossParameter", [
    Field("alphabet_size", "uint32", 1, default=0),
    Field("time_step", "uint32", 3, default=0),
    Field("blank_label", "int32", 4, default=0),
])

# --- ContinuationIndicator (jolibrain/caffe ContinuationIndicatorParameter) ---
CONTINUATION_INDICATOR = Message("ContinuationIndicatorParameter", [
    Field("time_step", "uint32", 1, default=0),
    Field("axis", "int32", 2, default=0),
])

# --- LabelsequenceAccuracy (jolibrain/caffe LabelsequenceAccuracyParameter) ---
LABELSEQUENCE_ACCURACY = Message("LabelsequenceAccuracyParameter", [
    Field("blank_label", "int32", 1, default=0),
])

# --- Lstm ---------------------------------------------------------------------------------------------------
# senlinuc/caffe_ocr@81642f61 src/caffe/proto/caffe.proto, message LSTMParameter (the same message in
# tianzhi0549/CTPN@f77ec9e7 caffe/src/caffe/proto/caffe.proto). caffe_ocr stores it at LayerParameter 8266711
# (caffe-layers-rcnn's roi_pooling_param, from caffe-fast-rcnn) and CTPN at 140 (BVLC's elu_param), so the
# block takes this pack's number 1400 (plugin.py). `batch_size` is read by neither fork's Lstm (the batch is
# the bottom's axis 1); it is kept so that their prototxts parse.
LSTM = Message("LSTMParameter", [
    Field("num_output", "uint32", 1),
    Field("clipping_threshold", "float", 2, default=0.0),
    Field("weight_filler", caffe_pb2.FillerParameter, 3),
    Field("bias_filler", caffe_pb2.FillerParameter, 4),
    Field("batch_size", "uint32", 5, default=1),
])

# --- DenseBlock ---------------------------------------------------------------------------------------------
# senlinuc/caffe_ocr@81642f61 src/caffe/proto/caffe.proto, message DenseBlockParameter (Tongcheng Li's
# memory-efficient DenseNet block, with the fork's names and camel case). The forks store it at LayerParameter
# 147, BVLC's swish_param, so the block takes this pack's number 1470 (plugin.py). The fork's layer reads
# neither initChannel (the bottom's channels), the convolution geometry fields (3x3, pad 1, stride 1 always),
# gpuIdx, BC_ultra_space_efficient nor workspace_MB for its numbers; they are kept so its prototxts parse.
DENSE_BLOCK = Message("DenseBlockParameter", [
    Field("numTransition", "int32", 1, default=40),
    Field("initChannel", "int32", 2, default=16),
    Field("growthRate", "int32", 3, default=12),
    Field("pad_h", "int32", 4, default=1),
    Field("pad_w", "int32", 5, default=1),
    Field("conv_verticalStride", "int32", 6, default=1),
    Field("conv_horizentalStride", "int32", 7, default=1),
    Field("filter_H", "int32", 8, default=3),
    Field("filter_W", "int32", 9, default=3),
    Field("Filter_Filler", caffe_pb2.FillerParameter, 10),
    Field("BN_Scaler_Filler", caffe_pb2.FillerParameter, 11),
    Field("BN_Bias_Filler", caffe_pb2.FillerParameter, 12),
    Field("gpuIdx", "int32", 15, default=0),
    Field("use_dropout", "bool", 16, default=False),
    Field("dropout_amount", "float", 17, default=0.0),
    Field("use_BC", "bool", 18, default=False),
    Field("BC_ultra_space_efficient", "bool", 19, default=False),
    Field("workspace_MB", "int32", 20, default=8),
    Field("moving_average_fraction", "float", 21, default=0.1),
])

_classes = build_messages("caffe_layers_ocr", [
    TRANSPOSE,
    REVERSE,
    CTC_DECODER,
    WARP_CTC_LOSS,
    CTC_LOSS,
    CONTINUATION_INDICATOR,
    LABELSEQUENCE_ACCURACY,
    LSTM,
    DENSE_BLOCK,
])
TransposeParameter = _classes["TransposeParameter"]
ReverseParameter = _classes["ReverseParameter"]
CTCDecoderParameter = _classes["CTCDecoderParameter"]
WarpCTCLossParameter = _classes["WarpCTCLossParameter"]
CtcLossParameter = _classes["CtcLossParameter"]
ContinuationIndicatorParameter = _classes["ContinuationIndicatorParameter"]
LabelsequenceAccuracyParameter = _classes["LabelsequenceAccuracyParameter"]
LSTMParameter = _classes["LSTMParameter"]
DenseBlockParameter = _classes["DenseBlockParameter"]
