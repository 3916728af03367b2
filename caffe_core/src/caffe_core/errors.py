"""Exceptions raised by caffe_core; each names the file, layer, blob or field at fault."""


class CaffeError(Exception):
    """Base of every error caffe_core raises on bad input or configuration."""


class PrototxtError(CaffeError):
    """A text-format file could not be parsed or failed validation."""


class ModelFileError(CaffeError):
    """A binary model file (.caffemodel, .solverstate, .binaryproto) is missing, truncated or corrupt."""


class LayerSetupError(CaffeError):
    """A layer refused its configuration or its bottom/top blobs."""


class NetBuildError(CaffeError):
    """A net definition is inconsistent (missing bottom, duplicate top, bad sharing...)."""


class UnknownLayerTypeError(CaffeError):
    """No installed pack provides the requested layer type."""


class PluginError(CaffeError):
    """A plugin failed to load, or two plugins claim the same name."""


class DeviceError(CaffeError):
    """GPU mode was requested but no usable cupy/CUDA device is present."""


class OnnxExportError(CaffeError):
    """A net, or one of its layers, cannot be written as ONNX."""
