"""Hook implementations of caffe-layers-seg: its parameter blocks and its BatchNormParameter fields."""

from typing import Any

from caffe_core.hookspecs import hookimpl
from caffe_core.params import ExtraField, ParamBlock

# LayerParameter numbers: inisis' (bn_param 1111, upsample_param 500, resize_param 251, pad_param 504,
# bilinear_interpolate_param 505, max_unpool_param 506, pixelshuffle_param 507); interp_param takes 2143, as
# other merged schemas do, because PSPNet's own 143 is BVLC's input_param.
BLOCK_NUMBERS = {
    "bn_param": 1111,
    "upsample_param": 500,
    "interp_param": 2143,
    "max_unpool_param": 506,
    "bilinear_interpolate_param": 505,
    "resize_param": 251,
    "pixelshuffle_param": 507,
    "pad_param": 504,
}


@hookimpl
def caffe_param_blocks() -> dict[str, Any]:
    """The pack's eight parameter blocks at the forks' LayerParameter numbers."""
    from caffe_layers_seg import params

    messages = {
        "bn_param": params.BNParameter,
        "upsample_param": params.UpsampleParameter,
        "interp_param": params.InterpParameter,
        "max_unpool_param": params.MaxUnPoolParameter,
        "bilinear_interpolate_param": params.BilinearInterpolateParameter,
        "resize_param": params.ResizeParameter,
        "pixelshuffle_param": params.PixelShuffleParameter,
        "pad_param": params.PadParameter,
    }
    return {name: ParamBlock(message, BLOCK_NUMBERS[name]) for name, message in messages.items()}


@hookimpl
def caffe_message_fields() -> dict[str, Any]:
    """inisis' BatchNormParameter fields 7-10, which its BatchNormKyle layer reads."""
    from caffe_core.proto import caffe_pb2

    return {
        "BatchNormParameter.weight_filler": ExtraField(caffe_pb2.FillerParameter, 7),
        "BatchNormParameter.bias_filler": ExtraField(caffe_pb2.FillerParameter, 8),
        "BatchNormParameter.use_alpha_beta": ExtraField("bool", 9, default=False),
        "BatchNormParameter.do_all_reduce": ExtraField("bool", 10, default=False),
    }
