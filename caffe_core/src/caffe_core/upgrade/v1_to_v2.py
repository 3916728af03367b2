"""V1 nets (`layers { type: CONVOLUTION ... }`) become V2 nets (`layer { type: "Convolution" ... }`),
as Caffe's UpgradeV1Net does."""

from __future__ import annotations

import logging

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.upgrade")


V1 = caffe_pb2.V1LayerParameter

# Caffe's UpgradeV1LayerType table: V1 enum value -> V2 type string.
V1_LAYER_TYPES = {
    V1.NONE: "",
    V1.ABSVAL: "AbsVal",
    V1.ACCURACY: "Accuracy",
    V1.ARGMAX: "ArgMax",
    V1.BNLL: "BNLL",
    V1.CONCAT: "Concat",
    V1.CONTRASTIVE_LOSS: "ContrastiveLoss",
    V1.CONVOLUTION: "Convolution",
    V1.DECONVOLUTION: "Deconvolution",
    V1.DATA: "Data",
    V1.DROPOUT: "Dropout",
    V1.DUMMY_DATA: "DummyData",
    V1.EUCLIDEAN_LOSS: "EuclideanLoss",
    V1.ELTWISE: "Eltwise",
    V1.EXP: "Exp",
    V1.FLATTEN: "Flatten",
    V1.HDF5_DATA: "HDF5Data",
    V1.HDF5_OUTPUT: "HDF5Output",
    V1.HINGE_LOSS: "HingeLoss",
    V1.IM2COL: "Im2col",
    V1.IMAGE_DATA: "ImageData",
    V1.INFOGAIN_LOSS: "InfogainLoss",
    V1.INNER_PRODUCT: "InnerProduct",
    V1.LRN: "LRN",
    V1.MEMORY_DATA: "MemoryData",
    V1.MULTINOMIAL_LOGISTIC_LOSS: "MultinomialLogisticLoss",
    V1.MVN: "MVN",
    V1.POOLING: "Pooling",
    V1.POWER: "Power",
    V1.RELU: "ReLU",
    V1.SIGMOID: "Sigmoid",
    V1.SIGMOID_CROSS_ENTROPY_LOSS: "SigmoidCrossEntropyLoss",
    V1.SILENCE: "Silence",
    V1.SOFTMAX: "Softmax",
    V1.SOFTMAX_LOSS: "SoftmaxWithLoss",
    V1.SPLIT: "Split",
    V1.SLICE: "Slice",
    V1.TANH: "TanH",
    V1.WINDOW_DATA: "WindowData",
    V1.THRESHOLD: "Threshold",
}

# Every typed block of V1LayerParameter (transform_param and loss_param included); V2 has each under
# the same name and Caffe copies each verbatim.
PARAM_BLOCKS = tuple(f.name for f in V1.DESCRIPTOR.fields if f.name.endswith("_param"))

_SHARE_MODES = {V1.STRICT: caffe_pb2.ParamSpec.STRICT, V1.PERMISSIVE: caffe_pb2.ParamSpec.PERMISSIVE}


def needs(param: caffe_pb2.NetParameter) -> bool:
    """Whether the net still lists V1 `layers`."""
    return len(param.layers) > 0


def upgrade(param: caffe_pb2.NetParameter) -> bool:
    """Replaces the V1 `layers` by V2 `layer` entries in place; False when a layer kept a V0 part."""
    if len(param.layer) > 0:
        raise NetBuildError(
            f"net '{param.name}': Refusing to upgrade inconsistent NetParameter input; the definition "
            "includes both 'layer' and 'layers' fields. The current format defines 'layer' fields with "
            "string type like layer { type: 'Layer' ... } and not layers { type: LAYER ... }. Manually "
            "switch the definition to 'layer' format to continue.")
    v1_layers = list(param.layers)
    upgraded = [caffe_pb2.LayerParameter() for _ in v1_layers]
    fully_compatible = True
    for i, (v1_layer, layer) in enumerate(zip(v1_layers, upgraded, strict=True)):
        if not upgrade_layer(v1_layer, layer):
            log.error("Upgrade of input layer %d failed.", i)
            fully_compatible = False
    param.ClearField("layers")
    param.layer.extend(upgraded)
    return fully_compatible


def upgrade_layer(v1_layer: caffe_pb2.V1LayerParameter, layer: caffe_pb2.LayerParameter) -> bool:
    """Fills layer with the V2 form of a V1 layer; False when the V1 layer still holds a V0 layer."""
    layer.Clear()
    layer.bottom.extend(v1_layer.bottom)
    layer.top.extend(v1_layer.top)
    if v1_layer.HasField("name"):
        layer.name = v1_layer.name
    layer.include.extend(v1_layer.include)
    layer.exclude.extend(v1_layer.exclude)
    if v1_layer.HasField("type"):
        layer.type = v2_layer_type(v1_layer.type)
    layer.blobs.extend(v1_layer.blobs)
    for i, name in enumerate(v1_layer.param):
        _param_spec(layer, i).name = name
    for i, mode in enumerate(v1_layer.blob_share_mode):
        _param_spec(layer, i).share_mode = _SHARE_MODES[mode]
    for i, lr in enumerate(v1_layer.blobs_lr):
        _param_spec(layer, i).lr_mult = lr
    for i, decay in enumerate(v1_layer.weight_decay):
        _param_spec(layer, i).decay_mult = decay
    layer.loss_weight.extend(v1_layer.loss_weight)
    for block in PARAM_BLOCKS:
        if v1_layer.HasField(block):
            getattr(layer, block).CopyFrom(getattr(v1_layer, block))
    if v1_layer.HasField("layer"):
        log.error("Input NetParameter has V0 layer -- ignoring.")
        return False
    return True


def v2_layer_type(v1_type: caffe_pb2.V1LayerParameter.LayerType) -> str:
    """The V2 type string of a V1 LayerType enum value."""
    try:
        return V1_LAYER_TYPES[v1_type]
    except KeyError:
        raise NetBuildError(f"Unknown V1LayerParameter layer type: {v1_type}") from None


def _param_spec(layer: caffe_pb2.LayerParameter, index: int) -> caffe_pb2.ParamSpec:
    while len(layer.param) <= index:
        layer.param.add()
    return layer.param[index]
