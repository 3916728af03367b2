"""Hook implementations of caffe-layers-std: the ONNX converters of its layer types."""

from collections.abc import Callable

from caffe_core.hookspecs import hookimpl


@hookimpl
def caffe_onnx_converters() -> dict[str, Callable[..., None]]:
    """Converters for every std layer type with an ONNX meaning."""
    from caffe_layers_std.onnx_export import arithmetic, linear, neuron, normalisation, shape

    return {**neuron.CONVERTERS, **linear.CONVERTERS, **normalisation.CONVERTERS, **arithmetic.CONVERTERS,
            **shape.CONVERTERS}
