"""V0 nets (`layers { layer { type: "conv" ... } }`) become V1 nets, as Caffe's UpgradeV0Net does.

First the V0 "padding" layers are folded into the conv/pool layer they feed; then each V0 layer's flat
fields move into the V1 typed parameter blocks. A field the layer's type cannot take is logged and
dropped, and the upgrade reports that it was not fully compatible (Caffe carries on regardless).
"""

from __future__ import annotations

import logging

from google.protobuf import message as pb_message

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.upgrade")


V1 = caffe_pb2.V1LayerParameter

V0_LAYER_TYPES = {
    "accuracy": V1.ACCURACY,
    "bnll": V1.BNLL,
    "concat": V1.CONCAT,
    "conv": V1.CONVOLUTION,
    "data": V1.DATA,
    "dropout": V1.DROPOUT,
    "euclidean_loss": V1.EUCLIDEAN_LOSS,
    "flatten": V1.FLATTEN,
    "hdf5_data": V1.HDF5_DATA,
    "hdf5_output": V1.HDF5_OUTPUT,
    "im2col": V1.IM2COL,
    "images": V1.IMAGE_DATA,
    "infogain_loss": V1.INFOGAIN_LOSS,
    "innerproduct": V1.INNER_PRODUCT,
    "lrn": V1.LRN,
    "multinomial_logistic_loss": V1.MULTINOMIAL_LOGISTIC_LOSS,
    "pool": V1.POOLING,
    "relu": V1.RELU,
    "sigmoid": V1.SIGMOID,
    "softmax": V1.SOFTMAX,
    "softmax_loss": V1.SOFTMAX_LOSS,
    "split": V1.SPLIT,
    "tanh": V1.TANH,
    "window_data": V1.WINDOW_DATA,
}

_DATA_SOURCES = {"data": "data_param", "hdf5_data": "hdf5_data_param", "images": "image_data_param",
                 "window_data": "window_data_param"}

# Each V0 field, in the order Caffe upgrades it (the order of its log lines): the V0 layer types that
# take it, each with the V1 (block, field) it moves to, and the name Caffe's error message gives it.
# A field of None means the whole V0 message becomes the block.
_TYPED_FIELDS: tuple[tuple[str, dict[str, tuple[str, str | None]], str], ...] = (
    ("num_output", {"conv": ("convolution_param", "num_output"),
                    "innerproduct": ("inner_product_param", "num_output")}, "num_output"),
    ("biasterm", {"conv": ("convolution_param", "bias_term"),
                  "innerproduct": ("inner_product_param", "bias_term")}, "biasterm"),
    ("weight_filler", {"conv": ("convolution_param", "weight_filler"),
                       "innerproduct": ("inner_product_param", "weight_filler")}, "weight_filler"),
    ("bias_filler", {"conv": ("convolution_param", "bias_filler"),
                     "innerproduct": ("inner_product_param", "bias_filler")}, "bias_filler"),
    ("pad", {"conv": ("convolution_param", "pad"), "pool": ("pooling_param", "pad")}, "pad"),
    ("kernelsize", {"conv": ("convolution_param", "kernel_size"),
                    "pool": ("pooling_param", "kernel_size")}, "kernelsize"),
    ("group", {"conv": ("convolution_param", "group")}, "group"),
    ("stride", {"conv": ("convolution_param", "stride"), "pool": ("pooling_param", "stride")}, "stride"),
    ("pool", {"pool": ("pooling_param", "pool")}, "pool"),
    ("dropout_ratio", {"dropout": ("dropout_param", "dropout_ratio")}, "dropout_ratio"),
    ("local_size", {"lrn": ("lrn_param", "local_size")}, "local_size"),
    ("alpha", {"lrn": ("lrn_param", "alpha")}, "alpha"),
    ("beta", {"lrn": ("lrn_param", "beta")}, "beta"),
    ("k", {"lrn": ("lrn_param", "k")}, "k"),
    ("source", {**{t: (block, "source") for t, block in _DATA_SOURCES.items()},
                "infogain_loss": ("infogain_loss_param", "source")}, "source"),
    ("batchsize", {t: (block, "batch_size") for t, block in _DATA_SOURCES.items()}, "batchsize"),
    ("rand_skip", {"data": ("data_param", "rand_skip"), "images": ("image_data_param", "rand_skip")},
     "rand_skip"),
    ("shuffle_images", {"images": ("image_data_param", "shuffle")}, "shuffle"),
    ("new_height", {"images": ("image_data_param", "new_height")}, "new_height"),
    ("new_width", {"images": ("image_data_param", "new_width")}, "new_width"),
    ("concat_dim", {"concat": ("concat_param", "concat_dim")}, "concat_dim"),
    ("det_fg_threshold", {"window_data": ("window_data_param", "fg_threshold")}, "det_fg_threshold"),
    ("det_bg_threshold", {"window_data": ("window_data_param", "bg_threshold")}, "det_bg_threshold"),
    ("det_fg_fraction", {"window_data": ("window_data_param", "fg_fraction")}, "det_fg_fraction"),
    ("det_context_pad", {"window_data": ("window_data_param", "context_pad")}, "det_context_pad"),
    ("det_crop_mode", {"window_data": ("window_data_param", "crop_mode")}, "det_crop_mode"),
    ("hdf5_output_param", {"hdf5_output": ("hdf5_output_param", None)}, "hdf5_output_param"),
)

# V0 fields that go to transform_param whatever the layer type.
_TRANSFORM_FIELDS = (("scale", "scale"), ("meanfile", "mean_file"), ("cropsize", "crop_size"),
                     ("mirror", "mirror"))


def needs(param: caffe_pb2.NetParameter) -> bool:
    """Whether any `layers` entry still holds a V0 `layer` sub-message."""
    return any(layer.HasField("layer") for layer in param.layers)


def upgrade(param: caffe_pb2.NetParameter) -> bool:
    """Replaces a V0 net by its V1 form in place; False when some V0 field had no V1 home."""
    upgraded, fully_compatible = upgrade_v0_net(param)
    param.CopyFrom(upgraded)
    return fully_compatible


def upgrade_v0_net(v0_net: caffe_pb2.NetParameter) -> tuple[caffe_pb2.NetParameter, bool]:
    """The V1 net for a V0 net (only name, layers, input, input_dim and force_backward carry over)."""
    padded = fold_padding_layers(v0_net)
    net = caffe_pb2.NetParameter()
    if padded.HasField("name"):
        net.name = padded.name
    fully_compatible = True
    for v0_layer in padded.layers:
        fully_compatible &= upgrade_layer(v0_layer, net.layers.add())
    net.input.extend(padded.input)
    net.input_dim.extend(padded.input_dim)
    if padded.HasField("force_backward"):
        net.force_backward = padded.force_backward
    return net, fully_compatible


def fold_padding_layers(param: caffe_pb2.NetParameter) -> caffe_pb2.NetParameter:
    """A copy of a V0 net without its "padding" layers, their pad moved into the conv/pool they feed."""
    out = caffe_pb2.NetParameter()
    out.CopyFrom(param)
    del out.layers[:]
    last_producer = dict.fromkeys(param.input, -1)
    for i, connection in enumerate(param.layers):
        layer_type = connection.layer.type
        if layer_type != "padding":
            out.layers.add().CopyFrom(connection)
        for j, blob in enumerate(connection.bottom):
            if blob not in last_producer:
                raise NetBuildError(f"V0 layer '{connection.layer.name}': unknown blob input '{blob}' "
                                    f"(bottom {j}); no earlier layer or net input produces it")
            producer_index = last_producer[blob]
            if producer_index == -1:
                continue
            producer = param.layers[producer_index]
            if producer.layer.type == "padding":
                _check_padding_use(connection, producer)
                target = out.layers[-1]
                target.layer.pad = producer.layer.pad
                target.bottom[j] = producer.bottom[0]
        for blob in connection.top:
            last_producer[blob] = i
    return out


def _check_padding_use(connection: caffe_pb2.V1LayerParameter, padding: caffe_pb2.V1LayerParameter) -> None:
    name, layer_type = connection.layer.name, connection.layer.type
    if layer_type not in ("conv", "pool"):
        raise NetBuildError(f"V0 layer '{name}': Padding layer input to non-convolutional / non-pooling "
                            f"layer type {layer_type}")
    if len(connection.bottom) != 1:
        raise NetBuildError(f"V0 layer '{name}': Conv Layer takes a single blob as input "
                            f"(it has {len(connection.bottom)})")
    if len(padding.bottom) != 1:
        raise NetBuildError(f"V0 padding layer '{padding.layer.name}': Padding Layer takes a single blob "
                            f"as input (it has {len(padding.bottom)})")
    if len(padding.top) != 1:
        raise NetBuildError(f"V0 padding layer '{padding.layer.name}': Padding Layer produces a single "
                            f"blob as output (it has {len(padding.top)})")


def upgrade_layer(connection: caffe_pb2.V1LayerParameter, out: caffe_pb2.V1LayerParameter) -> bool:
    """Fills out with the V1 form of a V0 layer connection; False when a field had no V1 home."""
    out.Clear()
    out.bottom.extend(connection.bottom)
    out.top.extend(connection.top)
    if not connection.HasField("layer"):
        return True
    v0 = connection.layer
    if v0.HasField("name"):
        out.name = v0.name
    layer_type = v0.type
    if v0.HasField("type"):
        out.type = v1_layer_type(layer_type)
    out.blobs.extend(v0.blobs)
    out.blobs_lr.extend(v0.blobs_lr)
    out.weight_decay.extend(v0.weight_decay)
    fully_compatible = True
    for v0_field, targets, error_name in _TYPED_FIELDS:
        if not v0.HasField(v0_field):
            continue
        if layer_type not in targets:
            log.error("Unknown parameter %s for layer type %s", error_name, layer_type)
            fully_compatible = False
            continue
        block, field = targets[layer_type]
        _assign(getattr(out, block), field, getattr(v0, v0_field))
    for v0_field, field in _TRANSFORM_FIELDS:
        if v0.HasField(v0_field):
            setattr(out.transform_param, field, getattr(v0, v0_field))
    return fully_compatible


def v1_layer_type(v0_type: str) -> caffe_pb2.V1LayerParameter.LayerType:
    """The V1 LayerType enum value of a V0 type string."""
    try:
        return V0_LAYER_TYPES[v0_type]
    except KeyError:
        raise NetBuildError(f"Unknown layer name: {v0_type} (a V0 layer type must be one of "
                            f"{', '.join(sorted(V0_LAYER_TYPES))})") from None


def _assign(block: pb_message.Message, field: str | None, value) -> None:
    if field is None:
        block.CopyFrom(value)
        return
    descriptor = block.DESCRIPTOR.fields_by_name[field]
    if descriptor.is_repeated:
        getattr(block, field).append(value)
    elif descriptor.message_type is not None:
        getattr(block, field).CopyFrom(value)
    else:
        setattr(block, field, value)
