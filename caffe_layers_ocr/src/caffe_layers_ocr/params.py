"""The pack's parameter messages, field for field those of the OCR forks' caffe.proto files.

Forks: senlinuc/caffe_ocr at 81642f61ea8f888e360cca30e08e05b7bc6d4556 (src/caffe/proto/caffe.proto) and
jolibrain/caffe at 23928c02fcf19f16ce46e74a96034f6f81b59f1c (master, src/caffe/proto/caffe.proto). The
LayerParameter numbers each block takes (and where they depart from the fork's) are in plugin.py.
"""

from caffe_core.messages import Field, Message, build_messages

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

_classes = build_messages("caffe_layers_ocr", [
    TRANSPOSE,
    REVERSE,
    CTC_DECODER,
    WARP_CTC_LOSS,
    CTC_LOSS,
    CONTINUATION_INDICATOR,
    LABELSEQUENCE_ACCURACY,
])
TransposeParameter = _classes["TransposeParameter"]
ReverseParameter = _classes["ReverseParameter"]
CTCDecoderParameter = _classes["CTCDecoderParameter"]
WarpCTCLossParameter = _classes["WarpCTCLossParameter"]
CtcLossParameter = _classes["CtcLossParameter"]
ContinuationIndicatorParameter = _classes["ContinuationIndicatorParameter"]
LabelsequenceAccuracyParameter = _classes["LabelsequenceAccuracyParameter"]
