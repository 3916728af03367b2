"""Hook implementations of caffe-layers-seg: its parameter blocks and its fields of Caffe's BatchNormParameter
and DropoutParameter."""

from collections.abc import Callable

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, ParamBlock

# LayerParameter numbers: inisis' (bn_param 1111, upsample_param 500, resize_param 251, pad_param 504,
# bilinear_interpolate_param 505, max_unpool_param 506, pixelshuffle_param 507); interp_param takes 2143, as
# other merged schemas do, because PSPNet's own 143 is BVLC's input_param; dense_image_data_param takes ENet's
# 46 for SegNet's block, because SegNet's own 138 is BVLC's tile_param.
BLOCK_NUMBERS = {
    "bn_param": 1111,
    "upsample_param": 500,
    "interp_param": 2143,
    "max_unpool_param": 506,
    "bilinear_interpolate_param": 505,
    "resize_param": 251,
    "pixelshuffle_param": 507,
    "pad_param": 504,
    "dense_image_data_param": 46,
    # crfasrnn: torrvision/caffe's own number 146 is BVLC's recurrent_param, so the block takes 2146 (the
    # 2000 + rule of interp_param). A fork .caffemodel keeps the block at 146, where this schema reads
    # recurrent_param; its blobs still copy by layer name (tests/test_multi_stage_meanfield.py).
    "multi_stage_meanfield_param": 2146,
    # PSANet: hszhao/PSANet's LayerParameter number.
    "pointwise_spatial_attention_param": 1001,
}
# SegNet's DropoutParameter.sample_weights_test is number 2, which caffe-fast-rcnn's scale_train (the R-CNN
# pack) already takes.
SAMPLE_WEIGHTS_TEST_NUMBER = 1002


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The pack's parameter blocks at the forks' LayerParameter numbers."""
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
        "dense_image_data_param": params.DenseImageDataParameter,
        "multi_stage_meanfield_param": params.MultiStageMeanfieldParameter,  # crfasrnn
        # PSANet
        "pointwise_spatial_attention_param": params.PointwiseSpatialAttentionParameter,
    }
    return {name: ParamBlock(message, BLOCK_NUMBERS[name]) for name, message in messages.items()}


@hookimpl
def caffe_message_fields() -> dict[str, ExtraField]:
    """inisis' BatchNormParameter fields 7-10 and SegNet's DropoutParameter.sample_weights_test (at 1002)."""
    from caffe_core.proto import caffe_pb2

    return {
        "BatchNormParameter.weight_filler": ExtraField(caffe_pb2.FillerParameter, 7),
        "BatchNormParameter.bias_filler": ExtraField(caffe_pb2.FillerParameter, 8),
        "BatchNormParameter.use_alpha_beta": ExtraField("bool", 9, default=False),
        "BatchNormParameter.do_all_reduce": ExtraField("bool", 10, default=False),
        "DropoutParameter.sample_weights_test": ExtraField("bool", SAMPLE_WEIGHTS_TEST_NUMBER, default=False),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Callable[..., None]]:
    """Converters for the pack's layer types; DenseImageData's (a data layer) and MultiStageMeanfield's
    refuse."""
    from caffe_layers_seg.onnx_export import attention, meanfield, normalization, other, resample, unpool

    return {**resample.CONVERTERS, **unpool.CONVERTERS, **normalization.CONVERTERS, **other.CONVERTERS,
            **meanfield.CONVERTERS, **attention.CONVERTERS}
