"""The pack's parameter blocks, declared in Python with the forks' field numbers, types and defaults.

Two blocks merge the messages of several forks into one:
- `BNParameter`: PSPNet's / TSN's / inisis' fields at their numbers (1-6) and SegNet's / ENet's fields
  renumbered to 101-103 (SegNet's own numbers 1-3 collide with PSPNet's).
- `UpsampleParameter`: inisis' `scale` (1) and `dims_num` (2) and SegNet's / ENet's fields at their numbers,
  except SegNet's `scale_h`, whose number 2 is inisis' `dims_num`, moved to 8. `scale` declares no default:
  each Upsample class applies its fork's default (SegNet 2, nearest 1).
`DenseImageDataParameter` is SegNet's message as it is (fields 1-12; ENet's `label_divide_factor` 13 is left
out).
`PointwiseSpatialAttentionParameter` (PSANet) is hszhao/PSANet's message as it is (fields 1-5).
"""

from caffe_core.messages import Enum, Field, Message, build_messages
from caffe_core.proto import caffe_pb2

FILLER = caffe_pb2.FillerParameter

BN_ENGINE = Enum("Engine", {"DEFAULT": 0, "CAFFE": 1, "CUDNN": 2})
BN_MODE = Enum("BNMode", {"LEARN": 0, "INFERENCE": 1})
BN = Message("BNParameter", [
    Field("slope_filler", FILLER, 1),
    Field("bias_filler", FILLER, 2),
    Field("momentum", "float", 3, default=0.9),
    Field("eps", "float", 4, default=1e-5),
    Field("frozen", "bool", 5, default=False),
    Field("engine", BN_ENGINE, 6, default="DEFAULT"),
    Field("scale_filler", FILLER, 101),
    Field("shift_filler", FILLER, 102),
    Field("bn_mode", BN_MODE, 103, default="LEARN"),
], enums=[BN_ENGINE, BN_MODE])

UPSAMPLE = Message("UpsampleParameter", [
    Field("scale", "int32", 1),
    Field("dims_num", "int32", 2, default=4),
    Field("scale_w", "uint32", 3),
    Field("pad_out_h", "bool", 4, default=False),
    Field("pad_out_w", "bool", 5, default=False),
    Field("upsample_h", "uint32", 6),
    Field("upsample_w", "uint32", 7),
    Field("scale_h", "uint32", 8),
])

INTERP = Message("InterpParameter", [
    Field("height", "int32", 1, default=0),
    Field("width", "int32", 2, default=0),
    Field("zoom_factor", "int32", 3, default=1),
    Field("shrink_factor", "int32", 4, default=1),
    Field("pad_beg", "int32", 5, default=0),
    Field("pad_end", "int32", 6, default=0),
])

MAX_UNPOOL = Message("MaxUnPoolParameter", [
    Field("dst_h", "uint32", 1),
    Field("dst_w", "uint32", 2),
])

BILINEAR_INTERPOLATE = Message("BilinearInterpolateParameter", [
    Field("dst_h", "int32", 1),
    Field("dst_w", "int32", 2),
    Field("scale_factor", "float", 3, default=1.0),
    Field("align_corners", "bool", 4, default=True),
])

RESIZE = Message("ResizeParameter", [
    Field("height", "uint32", 1),
    Field("width", "uint32", 2),
    Field("is_pyramid_test", "bool", 3, default=False),
    Field("out_height_scale", "float", 4),
    Field("out_width_scale", "float", 5),
])

PIXEL_SHUFFLE = Message("PixelShuffleParameter", [
    Field("upscale_factor", "int32", 1),
])

PAD_TYPE = Enum("PadType", {"CONSTANT": 0, "REPLICATE": 1, "REFLECT": 2})
PAD = Message("PadParameter", [
    Field("pad_type", PAD_TYPE, 1, default="CONSTANT"),
    Field("pad_u", "int32", 2, default=0),
    Field("pad_d", "int32", 3, default=0),
    Field("pad_l", "int32", 4, default=0),
    Field("pad_r", "int32", 5, default=0),
    Field("pad_value", "float", 6, default=0.0),
], enums=[PAD_TYPE])

DENSE_IMAGE_DATA = Message("DenseImageDataParameter", [
    Field("source", "string", 1),
    Field("batch_size", "uint32", 2),
    Field("rand_skip", "uint32", 3, default=0),
    Field("shuffle", "bool", 4, default=False),
    Field("new_height", "uint32", 5, default=0),
    Field("new_width", "uint32", 6, default=0),
    Field("is_color", "bool", 7, default=True),
    Field("mean_file", "string", 8),
    Field("root_folder", "string", 9, default=""),
    Field("mirror", "bool", 10, default=False),
    Field("crop_width", "uint32", 11, default=0),
    Field("crop_height", "uint32", 12, default=0),
])

# --- crfasrnn (CRF as RNN): torrvision/caffe master d779ee369bf86739bc225d99e78aefa040da199f, caffe.proto
# MultiStageMeanfieldParameter. The fork declares theta_alpha/beta/gamma and num_iterations `required` (with
# defaults); they are optional here with the same defaults. The layer reads only fields 3-6 and, for blobs
# it creates, 7-8 (the fork reads no field 1, 2, 9 or 10).
MEANFIELD_MODE = Enum("Mode", {"POTTS": 0})
MULTI_STAGE_MEANFIELD = Message("MultiStageMeanfieldParameter", [
    Field("compatibility_mode", MEANFIELD_MODE, 1, default="POTTS"),
    Field("threshold", "float", 2),
    Field("theta_alpha", "float", 3, default=10.0),
    Field("theta_beta", "float", 4, default=10.0),
    Field("theta_gamma", "float", 5, default=10.0),
    Field("num_iterations", "uint32", 6, default=1),
    Field("spatial_filter_weight", "float", 7, default=1.0),
    Field("bilateral_filter_weight", "float", 8, default=1.0),
    Field("forced_spatial_filter_weight", "float", 9),
    Field("forced_bilateral_filter_weight", "float", 10),
], enums=[MEANFIELD_MODE])
# --- end crfasrnn

# PSANet: hszhao/PSANet@ff91e4fb33247bc4461d792eae139fc4cdaa5f27 src/caffe/proto/caffe.proto,
# PointwiseSpatialAttentionParameter (no field has a default but is_softmax and psa_type; the layer reads
# HasField for the mask size and normalization_factor).
PSA_TYPE = Enum("PSAType", {"COLLECT": 0, "DISTRIBUTE": 1})
POINTWISE_SPATIAL_ATTENTION = Message("PointwiseSpatialAttentionParameter", [
    Field("attention_mask_height", "uint32", 1),
    Field("attention_mask_width", "uint32", 2),
    Field("normalization_factor", "float", 3),
    Field("is_softmax", "bool", 4, default=False),
    Field("psa_type", PSA_TYPE, 5, default="COLLECT"),
], enums=[PSA_TYPE])

_classes = build_messages("caffe_layers_seg", [BN, UPSAMPLE, INTERP, MAX_UNPOOL, BILINEAR_INTERPOLATE, RESIZE,
                                               PIXEL_SHUFFLE, PAD, DENSE_IMAGE_DATA,
                                               MULTI_STAGE_MEANFIELD, POINTWISE_SPATIAL_ATTENTION])
BNParameter = _classes["BNParameter"]
UpsampleParameter = _classes["UpsampleParameter"]
InterpParameter = _classes["InterpParameter"]
MaxUnPoolParameter = _classes["MaxUnPoolParameter"]
BilinearInterpolateParameter = _classes["BilinearInterpolateParameter"]
ResizeParameter = _classes["ResizeParameter"]
PixelShuffleParameter = _classes["PixelShuffleParameter"]
PadParameter = _classes["PadParameter"]
DenseImageDataParameter = _classes["DenseImageDataParameter"]
MultiStageMeanfieldParameter = _classes["MultiStageMeanfieldParameter"]  # crfasrnn
# PSANet
PointwiseSpatialAttentionParameter = _classes["PointwiseSpatialAttentionParameter"]
