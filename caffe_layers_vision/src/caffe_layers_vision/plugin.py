"""Hook implementations of caffe-layers-vision: the ONNX converters of its layer types."""

from collections.abc import Callable

from caffe_core.hookspecs import hookimpl


@hookimpl
def caffe_onnx_converters() -> dict[str, Callable[..., None]]:
    """Converters for the pack's layer types that have an ONNX meaning (Im2col has none)."""
    from caffe_layers_vision.onnx_export import convolution, crop, lrn, pooling, spp

    return {**convolution.CONVERTERS, **pooling.CONVERTERS, **lrn.CONVERTERS, **crop.CONVERTERS,
            **spp.CONVERTERS}
