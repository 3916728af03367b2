"""ONNX converters of caffe-layers-face's layers (they import onnx through caffe_core.onnx_export only)."""
