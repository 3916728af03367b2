"""The pack's parameter messages, field for field those of the face-recognition forks' caffe.proto files."""

from caffe_core.messages import Enum, Field, Message, build_messages
from caffe_core.proto import caffe_pb2

# --- happynear's NormFace / AM-Softmax layers. Messages copied from happynear/caffe-windows, branch
# "ms", commit 967eedf25009e334b7f6f933bb5e17aaaff5bef6 (2018-07-15), src/caffe/proto/caffe.proto.

# LayerParameter.flip_param = 212.
FLIP = Message("FlipParameter", [
    Field("flip_width", "bool", 1, default=True),
    Field("flip_height", "bool", 2, default=False),
])

# LayerParameter.normalize_param = 214 (not SSD's norm_param, which caffe-layers-ssd reads at 206).
NORMALIZE = Message("NormalizeParameter", [
    Field("normalize_type", "string", 1, default="L2"),
    Field("fix_gradient", "bool", 2, default=False),
    Field("bp_norm", "bool", 3, default=False),
])

# LayerParameter.channel_scale_param = 237.
CHANNEL_SCALE = Message("ChannelScaleParameter", [
    Field("do_forward", "bool", 1, default=True),
    Field("do_backward_feature", "bool", 2, default=True),
    Field("do_backward_scale", "bool", 3, default=True),
    Field("global_scale", "bool", 4, default=False),
    Field("max_global_scale", "float", 5, default=1000.0),
    Field("min_global_scale", "float", 6, default=0.0),
    Field("init_global_scale", "float", 7, default=1.0),
])

# LayerParameter.label_specific_add_param = 241.
LABEL_SPECIFIC_ADD = Message("LabelSpecificAddParameter", [
    Field("bias", "float", 1, default=0.0),
    Field("transform_test", "bool", 2, default=False),
    Field("bias_base", "float", 3, default=0.0),
    Field("bias_gamma", "float", 4, default=0.0),
    Field("bias_power", "float", 5, default=1.0),
    Field("bias_min", "float", 6, default=0.0),
    Field("bias_max", "float", 7, default=0.0),
    Field("iteration", "uint32", 8, default=0),
])

# --- MarginInnerProduct (SphereFace) ---
# wy1iu/sphereface f20b130a6e080bb51d2e46a9e157686df622bef3 (the Caffe in its tree last changed in
# 966c44c90511c7c88aab1af066bc69eb569e907f), tools/caffe-sphereface/src/caffe/proto/caffe.proto:
# MarginInnerProductParameter, at LayerParameter 147 there (see plugin.py for the number used here).
MARGIN_TYPE = Enum("MarginType", {"SINGLE": 0, "DOUBLE": 1, "TRIPLE": 2, "QUADRUPLE": 3})
MARGIN_INNER_PRODUCT = Message("MarginInnerProductParameter", [
    Field("num_output", "uint32", 1),
    Field("type", MARGIN_TYPE, 2, default="SINGLE"),
    Field("weight_filler", caffe_pb2.FillerParameter, 3),
    Field("axis", "int32", 4, default=1),
    Field("base", "float", 5, default=1.0),
    Field("gamma", "float", 6, default=0.0),
    Field("power", "float", 7, default=1.0),
    Field("iteration", "int32", 8, default=0),
    Field("lambda_min", "float", 9, default=0.0),
], enums=[MARGIN_TYPE])

# --- CenterLoss (caffe-face) ---
# ydwen/caffe-face 48ff38e30dd303511ac6b5f9455474453fef2644, src/caffe/proto/caffe.proto: CenterLossParameter,
# at LayerParameter 147 there (see plugin.py).
CENTER_LOSS = Message("CenterLossParameter", [
    Field("num_output", "uint32", 1),
    Field("center_filler", caffe_pb2.FillerParameter, 2),
    Field("axis", "int32", 3, default=1),
])

# --- CosinAddm and CombinedMargin (arcface-caffe) ---
# xialuxi/arcface-caffe 30ba26ad96589b0ecdfbb454bf089c1fdcc11ab2, file `proto`: CosinAddmParameter at
# LayerParameter 179, CombinedMarginParameter at 156.
COSIN_ADD_M = Message("CosinAddmParameter", [
    Field("m", "float", 1, default=0.5),
    Field("transform_test", "bool", 2, default=False),
])
COMBINED_MARGIN = Message("CombinedMarginParameter", [
    Field("m1", "float", 1, default=4.0),
    Field("m2", "float", 2, default=0.5),
    Field("m3", "float", 3, default=0.35),
    Field("transform_test", "bool", 4, default=False),
])

# --- AdaCosAddmScale (arcface-caffe, AdaCos) ---
# xialuxi/arcface-caffe 30ba26ad96589b0ecdfbb454bf089c1fdcc11ab2, file `AdaCos/proto`:
# AdaCosAddmScaleParameter at LayerParameter 211 (num_classes is a float there).
ADACOS_ADD_M_SCALE = Message("AdaCosAddmScaleParameter", [
    Field("m", "float", 1, default=0.5),
    Field("num_classes", "float", 2, default=8750.0),
    Field("transform_test", "bool", 3, default=False),
])

_classes = build_messages("caffe_layers_face", [
    FLIP, NORMALIZE, CHANNEL_SCALE, LABEL_SPECIFIC_ADD,  # happynear
    MARGIN_INNER_PRODUCT,  # MarginInnerProduct
    CENTER_LOSS,  # CenterLoss
    COSIN_ADD_M, COMBINED_MARGIN,  # CosinAddm, CombinedMargin
    ADACOS_ADD_M_SCALE,  # AdaCosAddmScale
])
FlipParameter = _classes["FlipParameter"]
NormalizeParameter = _classes["NormalizeParameter"]
ChannelScaleParameter = _classes["ChannelScaleParameter"]
LabelSpecificAddParameter = _classes["LabelSpecificAddParameter"]
MarginInnerProductParameter = _classes["MarginInnerProductParameter"]
CenterLossParameter = _classes["CenterLossParameter"]
CosinAddmParameter = _classes["CosinAddmParameter"]
CombinedMarginParameter = _classes["CombinedMarginParameter"]
AdaCosAddmScaleParameter = _classes["AdaCosAddmScaleParameter"]
