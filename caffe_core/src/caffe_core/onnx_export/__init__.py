"""ONNX export of built nets; packs add converters for their layer types through `caffe_onnx_converters`."""

try:
    import onnx  # noqa: F401
except ImportError as err:
    raise ImportError("ONNX export needs the onnx package: pip install 'caffe-core[onnx]'") from err

from caffe_core.onnx_export.export import DEFAULT_OPSET, MIN_OPSET, export, to_model
from caffe_core.onnx_export.graph import OnnxGraph

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "OnnxGraph", "export", "to_model"]
