"""ONNX converters of the ocr pack's layer types; `caffe_layers_ocr.plugin` registers them."""
