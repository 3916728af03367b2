"""Hook implementations: the pack's parameter blocks, and DenseNet's ceil_mode as Caffe's round_mode."""

from collections.abc import Callable

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import FieldAlias, ParamBlock


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The inisis fork's hardsigmoid/unsqueeze/relu6 blocks (501-503) and ShuffleNet's block (164)."""
    from caffe_layers_classify.params import (
        HardSigmoidParameter,
        ReLU6Parameter,
        ShuffleChannelParameter,
        UnsqueezeParameter,
    )

    return {
        "hardsigmoid_param": ParamBlock(HardSigmoidParameter, 501),
        "unsqueeze_param": ParamBlock(UnsqueezeParameter, 502),
        "relu6_param": ParamBlock(ReLU6Parameter, 503),
        "shuffle_channel_param": ParamBlock(ShuffleChannelParameter, 164),
    }


@hookimpl
def caffe_message_fields() -> dict[str, FieldAlias]:
    """PoolingParameter.ceil_mode (the forks' bool at BVLC's round_mode number 13) as round_mode text."""
    return {
        "PoolingParameter.ceil_mode": FieldAlias({"true": "round_mode: CEIL", "false": "round_mode: FLOOR"}),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Callable[..., None]]:
    """Converters for the pack's layer types that have an ONNX meaning (all eight of them)."""
    from caffe_layers_classify.onnx_export import channels, convolution, neuron

    return {**neuron.CONVERTERS, **channels.CONVERTERS, **convolution.CONVERTERS}
