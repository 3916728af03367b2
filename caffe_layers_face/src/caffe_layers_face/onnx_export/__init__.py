"""ONNX converters of caffe-layers-face (imported only by the exporter, as they need onnx)."""
